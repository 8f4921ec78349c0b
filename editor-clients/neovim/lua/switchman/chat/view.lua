--- The chat's two buffers (a read-only transcript and an input area) and their windows.
local config = require('switchman.config')
local ui = require('switchman.ui')

local View = {}
View.__index = View

local preview_ns = vim.api.nvim_create_namespace('switchman_preview')

local function buffer(name, filetype, root)
  local bufnr = ui.scratch_buffer(name, filetype)
  ui.markdown(bufnr)
  vim.api.nvim_buf_set_var(bufnr, 'switchman_root', root)
  return bufnr
end

--- A short buffer name for a root's chat: its folder name, numbered if another root has it.
local function unique_name(kind, root)
  local base = ('switchman://%s/%s'):format(kind, vim.fn.fnamemodify(root, ':t'))
  local name, n = base, 1
  local bufnr = ui.find_buffer(name)
  while bufnr do
    local ok, owner = pcall(vim.api.nvim_buf_get_var, bufnr, 'switchman_root')
    if ok and owner == root then
      break
    end
    n = n + 1
    name = base .. '-' .. n
    bufnr = ui.find_buffer(name)
  end
  return name
end

--- The chat view of a workspace root.
function View.new(root)
  local self = setmetatable({ root = root, open_line = false, followed_row = 1 }, View)
  self.transcript = buffer(unique_name('chat', root), 'switchman_chat', root)
  self.input = buffer(unique_name('input', root), 'switchman_input', root)
  vim.bo[self.transcript].modifiable = false
  ui.no_undo(self.transcript)
  self.empty = true
  self:show_preview(nil)
  return self
end

--- True while both buffers exist.
function View:valid()
  return vim.api.nvim_buf_is_valid(self.transcript) and vim.api.nvim_buf_is_valid(self.input)
end

--- Keep windows that show the end of the transcript at its end. One in another tab page (you work
--- elsewhere while it answers) has its cursor set from inside it, so that what it shows follows too:
--- set from outside, its cursor went to the end but the window went on showing the part it showed, also
--- once you were back in its tab page.
function View:follow()
  local last = vim.api.nvim_buf_line_count(self.transcript)
  local tab = vim.api.nvim_get_current_tabpage()
  for _, win in ipairs(vim.fn.win_findbuf(self.transcript)) do
    local row = vim.api.nvim_win_get_cursor(win)[1]
    if win ~= vim.api.nvim_get_current_win() or row >= self.followed_row or row == last then
      if vim.api.nvim_win_get_tabpage(win) ~= tab then
        vim.api.nvim_win_call(win, function()
          vim.api.nvim_win_set_cursor(0, { last, 0 })
        end)
      else
        vim.api.nvim_win_set_cursor(win, { last, 0 })
      end
    end
  end
  self.followed_row = last
end

--- Add render entries as new lines at the end of the transcript.
function View:append(entries)
  if #entries == 0 then
    return
  end
  local first = self.empty and 0 or -1
  ui.put(self.transcript, first, self.empty and 1 or -1, entries)
  self.empty, self.open_line = false, false
  self:follow()
end

--- Add render entries as new lines at the top of the transcript, a blank line after them
--- (history that arrived after the user sent a message).
function View:prepend(entries)
  if #entries == 0 then
    return
  elseif self.empty then
    return self:append(entries)
  end
  local lines = vim.list_extend(vim.list_slice(entries), { { '' } })
  ui.put(self.transcript, 0, 0, lines)
  self.followed_row = self.followed_row + #lines
  self:follow()
end

--- Add render entries as new lines above row `row` (0-based) of the transcript.
function View:insert(row, entries)
  ui.put(self.transcript, row, row, entries)
  if row < self.followed_row then
    self.followed_row = self.followed_row + #entries
  end
end

--- Show `rating` ('up', 'down', or nil: none) at the end of turn `turn_id`'s footer, if it is shown.
function View:show_rating(turn_id, rating)
  local row = ui.turn_footer(self.transcript, turn_id)
  if not row then
    return
  end
  local line = vim.api.nvim_buf_get_lines(self.transcript, row, row + 1, false)[1] or ''
  local base = require('switchman.render').unrated(line)
  ui.set_tail(self.transcript, row, #base, require('switchman.render').rated(base, rating):sub(#base + 1))
end

--- Add a blank line unless the transcript is empty (between messages).
function View:gap()
  if not self.empty then
    self:append({ { '' } })
  end
end

--- Append streamed answer text (it may contain newlines) to the current answer. A line's `\r\n` ending
--- (a model's, a proxy's) is a line end, its `\r` left out (it showed as `^M`), also split between chunks.
function View:stream(text)
  local pieces = vim.tbl_map(function(piece)
    return (piece:gsub('\r$', ''))
  end, vim.split(text, '\n', { plain = true }))
  local last = vim.api.nvim_buf_line_count(self.transcript) - 1
  if self.open_line then
    pieces[1] = vim.api.nvim_buf_get_lines(self.transcript, last, last + 1, false)[1] .. pieces[1]
    ui.put(self.transcript, last, last + 1, pieces)
  else
    ui.put(self.transcript, self.empty and 0 or -1, self.empty and 1 or -1, pieces)
  end
  self.empty, self.open_line = false, true
  self:follow()
end

--- Remove everything from the transcript.
function View:clear()
  vim.api.nvim_buf_clear_namespace(self.transcript, ui.ns, 0, -1)
  vim.api.nvim_buf_clear_namespace(self.transcript, ui.turns_ns, 0, -1)
  vim.api.nvim_buf_clear_namespace(self.transcript, ui.ends_ns, 0, -1)
  vim.api.nvim_buf_clear_namespace(self.transcript, ui.footers_ns, 0, -1)
  ui.put(self.transcript, 0, -1, { '' })
  self.empty, self.open_line = true, false
end

--- The transcript text (for tests and `:Switchman chat` users who yank it).
function View:text()
  return table.concat(vim.api.nvim_buf_get_lines(self.transcript, 0, -1, false), '\n')
end

--- The input area's text, and the input cleared.
function View:take_input()
  local lines = vim.api.nvim_buf_get_lines(self.input, 0, -1, false)
  vim.api.nvim_buf_set_lines(self.input, 0, -1, false, { '' })
  return vim.trim(table.concat(lines, '\n'))
end

--- Put a refused message back in the input area to be fixed (unless something new was typed).
function View:give_back(text)
  if vim.trim(self:draft()) == '' then
    vim.api.nvim_buf_set_lines(self.input, 0, -1, false, vim.split(text, '\n', { plain = true }))
  end
end

--- Add `text` to the input area, after what is typed there (a blank line between).
function View:add_to_input(text)
  local lines = vim.split(text, '\n', { plain = true })
  if vim.trim(self:draft()) == '' then
    vim.api.nvim_buf_set_lines(self.input, 0, -1, false, lines)
  else
    vim.api.nvim_buf_set_lines(self.input, -1, -1, false, { '', unpack(lines) })
  end
end

--- The input area's text, unchanged.
function View:draft()
  return table.concat(vim.api.nvim_buf_get_lines(self.input, 0, -1, false), '\n')
end

View.placeholder = 'Message Switchman · <C-s> sends · @alias routes one message · /help'

--- `text` as lines of at most `width` display cells, broken between words (inside a word
--- only when it is longer than a line).
function View.wrap(text, width)
  width = math.max(width, 8)
  local lines, line = {}, ''
  for word in text:gmatch('%S+') do
    while vim.fn.strdisplaywidth(word) > width do
      if line ~= '' then
        table.insert(lines, line)
        line = ''
      end
      table.insert(lines, vim.fn.strcharpart(word, 0, width))
      word = vim.fn.strcharpart(word, width)
    end
    local joined = line == '' and word or (line .. ' ' .. word)
    if vim.fn.strdisplaywidth(joined) <= width then
      line = joined
    else
      table.insert(lines, line)
      line = word
    end
  end
  if line ~= '' then
    table.insert(lines, line)
  end
  return lines
end

--- The text width of the input's window (the editor's width while it is not shown).
function View:input_width()
  local win = vim.fn.win_findbuf(self.input)[1]
  local width = win and vim.api.nvim_win_get_width(win) or vim.o.columns
  return width - 1 -- the last cell stays free, so nothing is clipped
end

--- Show where the draft would route (a hint while it is empty) in virtual lines below the
--- input, wrapped to the window: end-of-line text would be clipped in a narrow chat.
function View:show_preview(text)
  vim.api.nvim_buf_clear_namespace(self.input, preview_ns, 0, -1)
  self.preview = text
  local hint = text and text ~= '' and ('→ ' .. text) or nil
  if not hint and vim.trim(self:draft()) == '' then
    hint = View.placeholder
  end
  if not hint then
    return
  end
  local virt_lines = vim.tbl_map(function(line)
    return { { line, 'SwitchmanPreview' } }
  end, View.wrap(hint, self:input_width()))
  local last = vim.api.nvim_buf_line_count(self.input) - 1
  vim.api.nvim_buf_set_extmark(self.input, preview_ns, last, 0, { virt_lines = virt_lines })
end

--- The preview's text as shown, one string per virtual line (for tests and :messages).
function View:preview_lines()
  local out = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(self.input, preview_ns, 0, -1, { details = true })) do
    for _, chunks in ipairs(mark[4].virt_lines or {}) do
      table.insert(out, table.concat(vim.tbl_map(function(chunk)
        return chunk[1]
      end, chunks)))
    end
  end
  return out
end

local OPEN = {
  right = 'botright vsplit',
  left = 'topleft vsplit',
  below = 'botright split',
  above = 'topleft split',
  tab = 'tabnew',
}

local function size(value, total)
  return value <= 1 and math.floor(total * value) or value
end

--- The chat's look, set for its window only (`:setlocal`): set as `vim.wo` sets them (`:set`), they
--- were also the window's values for the next file it showed, so a `:tabnew` or a split opened from
--- the chat had no line numbers, signs nor folds.
local function window_options(win)
  vim.api.nvim_win_call(win, function()
    vim.opt_local.wrap = true
    vim.opt_local.linebreak = true
    vim.opt_local.number = false
    vim.opt_local.relativenumber = false
    vim.opt_local.signcolumn = 'no'
    vim.opt_local.foldenable = false
  end)
end

--- Open the chat's windows in this tab (or focus them); the cursor ends in the input.
function View:show()
  local o = config.options.chat
  local transcript_win = vim.fn.win_findbuf(self.transcript)[1]
  if not transcript_win or vim.api.nvim_win_get_tabpage(transcript_win) ~= vim.api.nvim_get_current_tabpage() then
    local position = OPEN[o.position] and o.position or 'right'
    vim.cmd(OPEN[position])
    transcript_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(transcript_win, self.transcript)
    if position == 'left' or position == 'right' then
      vim.api.nvim_win_set_width(transcript_win, size(o.size, vim.o.columns))
    elseif position ~= 'tab' then
      vim.api.nvim_win_set_height(transcript_win, size(o.size, vim.o.lines))
    end
    window_options(transcript_win)
  end
  local input_win = vim.fn.win_findbuf(self.input)[1]
  if not input_win then
    vim.api.nvim_set_current_win(transcript_win)
    vim.cmd('belowright split')
    input_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(input_win, self.input)
    vim.api.nvim_win_set_height(input_win, o.input_height)
    window_options(input_win)
    vim.api.nvim_win_call(input_win, function()
      vim.opt_local.winfixheight = true
    end)
  end
  vim.api.nvim_set_current_win(input_win)
  require('switchman.chat.breakat').watch() -- numbers kept whole where lines wrap ('breakat' is global only)
  self:show_preview(self.preview) -- wrapped to this window's width
  self.followed_row = vim.api.nvim_buf_line_count(self.transcript)
  vim.api.nvim_win_set_cursor(transcript_win, { self.followed_row, 0 })
  return input_win
end

--- Close the chat's windows (the buffers and a running turn carry on).
function View:hide()
  for _, bufnr in ipairs({ self.input, self.transcript }) do
    for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
      if #vim.api.nvim_list_wins() > 1 then
        vim.api.nvim_win_close(win, false)
      else
        vim.api.nvim_win_set_buf(win, vim.api.nvim_create_buf(true, false))
      end
    end
  end
end

return View
