--- Buffers, floats and highlights shared by the chat, transcripts and reports.
local config = require('switchman.config')

local M = {}

M.ns = vim.api.nvim_create_namespace('switchman')

--- `text` on one line (runs of spaces and line breaks as one space), cut to `max` characters
--- with `…` when longer.
function M.clip(text, max)
  text = (text or ''):gsub('%s+', ' ')
  return vim.fn.strchars(text) > max and (vim.fn.strcharpart(text, 0, max - 1) .. '…') or text
end

local HIGHLIGHTS = {
  SwitchmanBadge = 'Special',
  SwitchmanUser = 'Title',
  SwitchmanTool = 'Comment',
  SwitchmanNotice = 'WarningMsg',
  SwitchmanError = 'ErrorMsg',
  SwitchmanFooter = 'Comment',
  SwitchmanPreview = 'Comment',
  SwitchmanDiffAdd = 'DiffAdd',
  SwitchmanDiffDelete = 'DiffDelete',
}

--- Link the plugin's highlight groups to standard ones (colorschemes may override them).
function M.define_highlights()
  for group, link in pairs(HIGHLIGHTS) do
    vim.cmd(('highlight default link %s %s'):format(group, link))
  end
end

M.define_highlights()

local function highlight(bufnr, row, entry)
  if entry.hl then
    vim.api.nvim_buf_add_highlight(bufnr, M.ns, entry.hl, row, 0, -1)
  end
  if entry.badge then
    local from = entry[1]:find('[', 1, true)
    if from then
      vim.api.nvim_buf_add_highlight(bufnr, M.ns, 'SwitchmanBadge', row, from - 1, -1)
    end
  end
end

--- Replace rows `first`..`last` (end-exclusive, -1: end) with render entries, highlighted.
--- An entry is one line: a line break in text the daemon gave for one (a rule's name in a badge,
--- `name: "a\nb"`) is shown as a space; a buffer line cannot hold one (Neovim raises an error).
--- Marks on the lines that start a turn's answer (an entry with `turn = <id>`), so that the
--- turn of a line is known (Apply names the turn whose code block it applies).
M.turns_ns = vim.api.nvim_create_namespace('switchman_turns')
local turn_marks = {} -- bufnr -> { mark id -> turn id }

--- The turn whose answer holds row `row` (1-based) of `bufnr`: the last turn mark at or above it.
function M.turn_at(bufnr, row)
  local marks = vim.api.nvim_buf_get_extmarks(bufnr, M.turns_ns, { row - 1, 0 }, 0, { limit = 1 })
  return marks[1] and (turn_marks[bufnr] or {})[marks[1][1]] or nil
end

--- Marks on the lines that end a turn's answer (its outcome: an entry with `turn_end = <id>`), so
--- that a line of the turn can be added there later (the question of an Apply of its code).
M.ends_ns = vim.api.nvim_create_namespace('switchman_turn_ends')
local end_marks = {} -- bufnr -> { turn id -> mark id }

--- The row (0-based) of the outcome of turn `turn_id`'s answer in `bufnr`, or nil when not shown.
function M.turn_end(bufnr, turn_id)
  local id = (end_marks[bufnr] or {})[turn_id]
  local mark = id and vim.api.nvim_buf_get_extmark_by_id(bufnr, M.ends_ns, id, {}) or {}
  return mark[1]
end

function M.put(bufnr, first, last, entries)
  local texts = {}
  for i, entry in ipairs(entries) do
    texts[i] = (type(entry) == 'string' and entry or entry[1]):gsub('\r?\n', ' ')
  end
  local modifiable = vim.bo[bufnr].modifiable
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, first, last, false, texts)
  vim.bo[bufnr].modifiable = modifiable
  local row = first >= 0 and first or (vim.api.nvim_buf_line_count(bufnr) - #entries)
  for i, entry in ipairs(entries) do
    if type(entry) == 'table' then
      highlight(bufnr, row + i - 1, entry)
      if entry.turn then
        turn_marks[bufnr] = turn_marks[bufnr] or {}
        turn_marks[bufnr][vim.api.nvim_buf_set_extmark(bufnr, M.turns_ns, row + i - 1, 0, {})] = entry.turn
      end
      if type(entry.turn_end) == 'string' then
        end_marks[bufnr] = end_marks[bufnr] or {}
        end_marks[bufnr][entry.turn_end] = vim.api.nvim_buf_set_extmark(bufnr, M.ends_ns, row + i - 1, 0, {})
      end
    end
  end
end

--- Highlight a buffer as Markdown (Vim's syntax), without flagging `snake_case` words as
--- errors as markdown.vim does.
function M.markdown(bufnr)
  vim.bo[bufnr].syntax = 'markdown'
  vim.api.nvim_buf_call(bufnr, function()
    vim.cmd([[silent! syntax match SwitchmanWordUnderscore "\w\@<=_\w\@="]])
  end)
end

--- The buffer named exactly `name`, or nil.
function M.find_buffer(name)
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(bufnr) == name then
      return bufnr
    end
  end
  return nil
end

--- Keep no undo history in `bufnr`, a buffer Switchman writes and the user only reads: `g-` and
--- `:earlier` (which do not check 'modifiable') undid its text to the empty buffer it started as.
function M.no_undo(bufnr)
  vim.bo[bufnr].undolevels = -1
end

--- A named scratch buffer (reused if it exists): not a file, kept when hidden, no swap file.
function M.scratch_buffer(name, filetype)
  local bufnr = M.find_buffer(name)
  if not bufnr then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, name)
  end
  vim.bo[bufnr].buftype = 'nofile'
  vim.bo[bufnr].bufhidden = 'hide'
  vim.bo[bufnr].swapfile = false
  vim.bo[bufnr].filetype = filetype or 'markdown'
  return bufnr
end

--- Close the current window, or leave the buffer when it is the last window.
function M.close_window()
  if not pcall(vim.api.nvim_win_close, 0, false) then
    vim.cmd('silent! bprevious')
  end
end

local function close_with(bufnr, keys)
  for _, lhs in ipairs(keys) do
    vim.keymap.set('n', lhs, M.close_window, { buffer = bufnr, nowait = true, silent = true, desc = 'Close' })
  end
end

--- Replace the text of the read-only scratch buffer `bufnr` with `entries`.
function M.fill(bufnr, entries)
  M.no_undo(bufnr)
  vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  vim.bo[bufnr].modifiable = true
  M.put(bufnr, 0, -1, entries)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].modified = false
end

--- A read-only scratch buffer `name` holding `entries`, shown in a split (reused if open).
function M.scratch(name, entries, opts)
  opts = opts or {}
  local bufnr = M.scratch_buffer(name, opts.filetype)
  M.fill(bufnr, entries)
  if opts.root then
    vim.api.nvim_buf_set_var(bufnr, 'switchman_root', opts.root)
  end
  close_with(bufnr, { 'q' })
  local win = vim.fn.bufwinid(bufnr)
  if win == -1 then
    vim.cmd(opts.split or 'botright split')
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, bufnr)
  end
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { 1, 0 })
  return bufnr, win
end

--- A centred floating window showing `entries`; `q` or <Esc> closes it.
function M.float(entries, opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.bo[bufnr].bufhidden = 'wipe'
  vim.bo[bufnr].filetype = opts.filetype or 'markdown'
  M.no_undo(bufnr)
  M.put(bufnr, 0, -1, entries)
  vim.bo[bufnr].modifiable = false
  local width, widths = 20, {}
  for i, entry in ipairs(entries) do
    widths[i] = vim.fn.strdisplaywidth(type(entry) == 'string' and entry or entry[1])
    width = math.max(width, widths[i])
  end
  width = math.min(width + 2, math.floor(vim.o.columns * 0.9))
  -- as tall as its lines wrapped to that width: a line counted once would push the last ones
  -- out of view, with nothing to say that more is there
  local rows = 0
  for _, line_width in ipairs(widths) do
    rows = rows + math.max(1, math.ceil(line_width / width))
  end
  local height = math.min(rows, math.floor(vim.o.lines * 0.8))
  local win_opts = {
    relative = 'editor',
    width = width,
    height = math.max(height, 1),
    row = math.floor((vim.o.lines - height) / 2) - 1,
    col = math.floor((vim.o.columns - width) / 2),
    style = 'minimal',
    border = config.options.float.border,
  }
  if opts.title and vim.fn.has('nvim-0.9') == 1 then
    win_opts.title = ' ' .. opts.title .. ' '
  end
  local opened, win = pcall(vim.api.nvim_open_win, bufnr, true, win_opts)
  if not opened then -- a border this Neovim does not know (setup()'s float.border)
    vim.notify(("Switchman: setup()'s float.border %s is no border Neovim knows (:help nvim_open_win()); the "
      .. 'default one is used.'):format(vim.inspect(win_opts.border)), vim.log.levels.WARN)
    win_opts.border = config.defaults.float.border
    win = vim.api.nvim_open_win(bufnr, true, win_opts)
  end
  vim.wo[win].wrap = true
  close_with(bufnr, { 'q', '<Esc>' })
  return bufnr, win
end

return M
