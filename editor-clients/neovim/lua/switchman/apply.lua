--- Apply: put a code block of an answer into a file, through the daemon (`switchman/applyCode`).
---
--- The plugin never edits the buffer itself: the daemon asks first with the same approval as the
--- model's own edits (the diff in a tab, then Allow once / Always / Deny), and applies the change
--- with `workspace/applyEdit`; it lands in the buffer (saved when the buffer was) and undoable. The target is the
--- code window (the window you came to the chat from); the code replaces the lines of that buffer's
--- last visual selection (`'<` to `'>`), or the whole file when it has none.
local client = require('switchman.client')
local protocol = require('switchman.protocol')

local M = {}

--- The end of a line in any position encoding (the daemon clamps it to the line's length).
local LINE_END = 2147483647

local function is_file_window(win, skip)
  local buf = vim.api.nvim_win_get_buf(win)
  return not skip[buf] and vim.bo[buf].buftype == '' and vim.api.nvim_buf_get_name(buf) ~= ''
end

--- The window the code goes to: the previous window when it shows a file, else the first that does.
--- `skip` is a set of buffers (the chat's own) never chosen.
function M.target_window(skip)
  local previous = vim.fn.win_getid(vim.fn.winnr('#'))
  if previous ~= 0 and vim.api.nvim_win_is_valid(previous) and is_file_window(previous, skip) then
    return previous
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if is_file_window(win, skip) then
      return win
    end
  end
  return nil
end

--- The lines of `bufnr`'s last visual selection, or nil when it has none.
function M.selected_lines(bufnr)
  local ok_first, first = pcall(vim.api.nvim_buf_get_mark, bufnr, '<')
  local ok_last, last = pcall(vim.api.nvim_buf_get_mark, bufnr, '>')
  if not (ok_first and ok_last) or first[1] == 0 or last[1] == 0 then
    return nil
  end
  local count = vim.api.nvim_buf_line_count(bufnr)
  if first[1] > count then
    return nil
  end
  return first[1], math.min(last[1], count)
end

--- The `switchman/applyCode` params for putting `code` into `bufnr`.
function M.params(root, bufnr, code, turn_id)
  local text = require('switchman.edits').buffer_text(bufnr)
  local params = {
    workspace = require('switchman.workspace').uri(root),
    uri = vim.uri_from_bufnr(bufnr),
    text = text,
    code = code,
    turn_id = turn_id,
  }
  local first, last = M.selected_lines(bufnr)
  if first then
    -- whole lines: from the start of the first to the end of the last (its line break stays)
    params.range = { start = { line = first - 1, character = 0 }, ['end'] = { line = last - 1, character = LINE_END } }
  else
    params.code = code .. ((code ~= '' and vim.bo[bufnr].eol) and '\n' or '')
  end
  return params
end

--- What became of an Apply, as a message and its level. `unsaved`: the buffer it went to is still
--- modified (it had unsaved changes of the user's, so it was not written for them).
function M.outcome(result, unsaved)
  if result.unchanged == true then -- nothing was asked: the file already had the code
    return 'Switchman: ' .. tostring(result.reason), vim.log.levels.INFO
  end
  if result.applied and result.reason and result.reason ~= vim.NIL then
    return ('Switchman: applied to %s, but: %s'):format(result.path, result.reason), vim.log.levels.WARN
  end
  if result.applied and unsaved then
    return ('Switchman: applied to %s, not saved: the buffer had unsaved changes (:w saves it; u undoes it)')
      :format(result.path), vim.log.levels.INFO
  end
  if result.applied then
    return ('Switchman: applied to %s and saved (u undoes it)'):format(result.path), vim.log.levels.INFO
  end
  if result.decision == 'deny' then
    local why = (result.reason and result.reason ~= vim.NIL) and (' (' .. result.reason .. ')') or ''
    return ('Switchman: not applied to %s%s'):format(result.path, why), vim.log.levels.INFO
  end
  return ('Switchman: the change to %s was not applied: %s'):format(result.path, tostring(result.reason)),
    vim.log.levels.WARN
end

--- Apply `code` to the code window of the chat of `root` (`chat_buffers`: the chat's own buffers).
--- `asked(approval)`: called with the question the daemon asked and its answer, when it asked one.
function M.apply(root, code, chat_buffers, turn_id, asked)
  local win = M.target_window(chat_buffers or {})
  if not win then
    return vim.notify('Switchman: open the file the code is for in a window, then apply again.', vim.log.levels.INFO)
  end
  local bufnr = vim.api.nvim_win_get_buf(win)
  local params = M.params(root, bufnr, code, turn_id)
  local bases = require('switchman.edits').bases
  bases[params.uri] = params.text -- its edit is made from this text, not the disk's
  client.request(root, protocol.request.apply_code, params, function(err, result)
    if bases[params.uri] == params.text then
      bases[params.uri] = nil
    end
    if err then
      return client.notify_error(err, vim.log.levels.WARN)
    end
    if asked and type(result.approval) == 'table' then
      asked(result.approval)
    end
    vim.notify(M.outcome(result, vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].modified))
  end)
end

return M
