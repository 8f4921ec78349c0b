--- Answering `switchman/approve`: the daemon asks before a tool changes a file or runs a command.
---
--- A file change opens in a new tab as a diff (current text left, proposed right); a command is
--- shown in the prompt. `vim.ui.select` offers the three answers; "Deny" then asks for an optional
--- reason (the model sees it). Neovim answers server requests synchronously, so the handler waits
--- (processing events, so the UI works) until the user has chosen.
local ui = require('switchman.ui')

local M = {}

M.choices = {
  { decision = 'allow_once', label = 'Allow once' },
  { decision = 'allow_always', label = 'Always allow %s in this workspace' },
  { decision = 'deny', label = 'Deny' },
}

--- How long to wait for the user (the daemon gives up after its own timeout, 300 s by default).
M.wait_ms = 10 * 60 * 1000

--- Questions being asked: the server's request id (`approve-<id>`) -> { root, withdrawn }.
local pending = {}

--- The daemon withdrew request `id` (`$/cancelRequest`: its turn was cancelled, or it stopped
--- waiting): the question goes away and a later choice is ignored.
function M.withdraw(id, why)
  local state = id ~= nil and pending[tostring(id)]
  if state then
    state.withdrawn = why
    state.wake()
  end
end

--- The daemon of `root` stopped: every question it asked goes away.
function M.withdraw_root(root, why)
  for _, state in pairs(pending) do
    if state.root == root then
      state.withdrawn = why
      state.wake()
    end
  end
end

local function scratch(lines, name, filetype)
  local buf = vim.api.nvim_create_buf(false, true)
  ui.no_undo(buf)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].modifiable = false
  pcall(vim.api.nvim_buf_set_name, buf, name)
  if filetype and filetype ~= '' then
    vim.bo[buf].filetype = filetype
  end
  return buf
end

local function split(text)
  if text == nil or text == vim.NIL then
    return {}
  end
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

--- The filetype of `path` (for syntax in the diff), or '' when Neovim cannot tell.
function M.filetype(path)
  if not (vim.filetype and vim.filetype.match) then
    return ''
  end
  local ok, found = pcall(vim.filetype.match, { filename = path }) -- 0.8+
  if not ok then
    local buf = vim.api.nvim_create_buf(false, true)
    ok, found = pcall(vim.filetype.match, path, buf) -- 0.7
    vim.api.nvim_buf_delete(buf, { force = true })
  end
  return (ok and type(found) == 'string') and found or ''
end

--- Runs of more empty lines than this in what a question shows are shown as one line saying how many.
local MAX_EMPTY_LINES = 2

--- The lines of `text` as an approval question's tab shows them: a run of empty (or blank) lines is one
--- line saying how many, `[39 empty lines]`. Forty of them pushed the rest of a command, a task or a
--- change out of the tab, where it could not be scrolled to while the question waited. (Neovim draws
--- control characters in a buffer itself: `^M`, `^[`, `<202e>`.)
function M.shown_lines(text)
  local lines, empty = {}, 0
  local function flush()
    if empty > MAX_EMPTY_LINES then
      table.insert(lines, ('[%d empty lines]'):format(empty))
    else
      for _ = 1, empty do
        table.insert(lines, '')
      end
    end
    empty = 0
  end
  for _, line in ipairs(split(text)) do
    if vim.trim(line) == '' then
      empty = empty + 1
    else
      flush()
      table.insert(lines, line)
    end
  end
  flush()
  return lines
end

--- Show `lines` (buffer `name`) in the current window, wrapped: a long line's end is on screen, not
--- past the window's right edge (a diff window does not wrap by default).
local function show_in_window(lines, name, filetype)
  local buf = scratch(lines, name, filetype)
  vim.api.nvim_win_set_buf(0, buf)
  vim.wo.wrap = true
  return buf
end

--- Open the change as a diff in a new tab; returns the tab to close afterwards. Each side's runs of
--- empty lines are folded (`M.shown_lines`) alike, so unchanged runs still line up.
function M.show_diff(request)
  local filetype = M.filetype(request.path)
  vim.cmd('tabnew')
  local tab = vim.api.nvim_get_current_tabpage()
  local empty = vim.api.nvim_get_current_buf()
  show_in_window(M.shown_lines(request.original), ('switchman://%s/current/%s'):format(request.id, request.path),
    filetype)
  pcall(vim.api.nvim_buf_delete, empty, { force = true })
  vim.cmd('diffthis')
  vim.wo.wrap = true
  vim.cmd('rightbelow vsplit')
  show_in_window(M.shown_lines(request.proposed), ('switchman://%s/proposed/%s'):format(request.id, request.path),
    filetype)
  vim.cmd('diffthis')
  vim.wo.wrap = true
  return tab
end

--- Close the question's tab page; from it, back to `from`, the one you were in as it was asked
--- (`:tabclose` goes to the tab page on its right, another of yours, or wherever 'tabclose' says).
local function close(tab, from)
  if tab and vim.api.nvim_tabpage_is_valid(tab) and #vim.api.nvim_list_tabpages() > 1 then
    local was_current = tab == vim.api.nvim_get_current_tabpage()
    vim.cmd('tabclose ' .. vim.api.nvim_tabpage_get_number(tab))
    if was_current and vim.api.nvim_tabpage_is_valid(from) then
      vim.api.nvim_set_current_tabpage(from)
    end
  end
end

local function given(value)
  return value ~= nil and value ~= vim.NIL
end

--- The tier a delegation's worker will run on, and a note naming the one the planner asked for
--- when the tier floor lowered it (` (deep, capped by the tier floor)`; else '').
function M.worker_tier(request)
  local tier = given(request.tier) and request.tier or '?'
  if given(request.requested_tier) and request.requested_tier ~= tier then
    return tier, (' (%s, capped by the tier floor)'):format(request.requested_tier)
  end
  return tier, ''
end

--- The model a delegation's worker will run on, without its provider, and what chose it when its tier
--- did not (`claude-opus-4-7 (rule: docs)`); nil from a daemon (or a record) that did not name it.
function M.worker_model(request)
  if not given(request.model) then
    return nil
  end
  local name = require('switchman.models').any_short_name(request.model)
  return given(request.routed_by) and ('%s (%s)'):format(name, request.routed_by) or name
end

--- A delegation's details: the tier and model, the write/execute tools the worker gets, and its whole
--- task. That the tier floor capped the tier is said once, by the question (`M.prompt`) shown with them.
function M.delegation_lines(request)
  local tools = given(request.worker_tools) and table.concat(request.worker_tools, ', ') or ''
  local model = M.worker_model(request)
  local lines = {
    ('Delegate to a worker on the %s tier%s.'):format((M.worker_tier(request)), model and (', running ' .. model) or ''),
  }
  if given(request.asked_again) then -- the earlier question is marked superseded only with the call's result
    table.insert(lines, ('Asked again: %s.'):format(request.asked_again))
  end
  vim.list_extend(lines, { 'The worker may use: ' .. (tools ~= '' and tools or '(no write tools)'), '', 'Task:' })
  vim.list_extend(lines, M.shown_lines(given(request.task) and request.task or ''))
  return lines
end

--- The lines of a command of several lines, shown whole while it is asked about (`M.shown_lines`).
function M.command_lines(request)
  local lines = { ('Run in %s:'):format(request.cwd), '' }
  vim.list_extend(lines, M.shown_lines(request.command))
  return lines
end

--- Show `lines` in a new tab (buffer `name`); returns the tab to close afterwards.
local function show_lines(lines, name)
  vim.cmd('tabnew')
  local tab = vim.api.nvim_get_current_tabpage()
  local empty = vim.api.nvim_get_current_buf()
  show_in_window(lines, name)
  pcall(vim.api.nvim_buf_delete, empty, { force = true })
  return tab
end

--- Show a delegation's task and tools in a new tab; returns the tab to close afterwards.
function M.show_delegation(request)
  return show_lines(M.delegation_lines(request), ('switchman://%s/delegation'):format(request.id))
end

local function several_lines(command)
  return given(command) and command:find('\n', 1, true) ~= nil
end

--- The loaded buffer of the file at `uri`, or nil (no buffer is created).
local function loaded_buffer(uri)
  local ok, name = pcall(vim.uri_to_fname, uri)
  if not ok then
    return nil
  end
  name = vim.fn.resolve(name)
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.fn.resolve(vim.api.nvim_buf_get_name(bufnr)) == name then
      return bufnr
    end
  end
  return nil
end

--- The end of `M.stale`'s reason, for the model: the user has nothing to read again.
local MODEL_ADVICE = ' Read the file again to make the change.'

--- Why an approved change is not applied after all: the file's buffer no longer has the text the
--- daemon computed the change from (the user typed while the question waited; or the buffer is too
--- large to be shared, so the daemon read the disk, which lacks its unsaved changes). The edit's positions would then point
--- into other text and garble the file. Nil when it still fits, or the file is not loaded (the
--- edit then goes to the file the daemon read). A deletion or a new file has no positions.
function M.stale(request)
  if request.tool_class ~= 'write' or not (given(request.uri) and given(request.original) and given(request.proposed)) then
    return nil
  end
  local bufnr = loaded_buffer(request.uri)
  if not bufnr then
    return nil
  end
  local original = split((request.original:gsub('\r\n', '\n')))
  if vim.deep_equal(original, vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) then
    return nil
  end
  return ('%s changed in the editor since this change was proposed (or has unsaved changes it was not made '
    .. 'from): applied to that text it would have landed in the wrong place, so nothing was changed.'
    .. MODEL_ADVICE):format(given(request.path) and request.path or 'The file')
end

--- The question, as the model's text gave it.
local function question(request)
  local text
  if several_lines(request.command) then -- its first line: the whole command is in the tab
    text = ('Switchman wants to run `%s …` in %s (the whole command is in the new tab)'):format(
      split(request.command)[1], request.cwd)
  elseif given(request.command) then
    text = ('Switchman wants to run `%s` in %s'):format(request.command, request.cwd)
  elseif request.tool == 'delegate' then
    local tools = given(request.worker_tools) and table.concat(request.worker_tools, ', ') or ''
    local task = vim.split(given(request.task) and request.task or '', '\n', { plain = true })[1]
    local tier, capped = M.worker_tier(request)
    local model = M.worker_model(request)
    text = ('Switchman wants to delegate to a %s worker%s%s with %s: %s'):format(
      tier, capped, model and (' on ' .. model) or '', tools ~= '' and tools or 'no write tools', task)
    if given(request.asked_again) then
      text = ('%s (asked again: %s)'):format(text, request.asked_again)
    end
  else
    text = ('Switchman: %s'):format(request.title)
  end
  if request.is_worker == true then
    text = text .. ' (asked by a worker: an answer to a worker is not remembered, so it may ask again)'
  end
  return text
end

--- The one-line question `vim.ui.select` shows, its control characters made visible (`^M`,
--- `^[`, `<202e>`): printed as they are, a carriage return in a command sent the prompt's cursor
--- back to its start, so `touch x #\rls -la` read as `ls -la`.
function M.prompt(request)
  return vim.fn.strtrans(question(request))
end

--- The answers offered for `request`: a worker's question has no "always" (the daemon remembers
--- no answer given to a worker, so it would only repeat "Allow once"), as in VS Code.
function M.offered(request)
  return vim.tbl_filter(function(choice)
    return choice.decision ~= 'allow_always' or request.is_worker ~= true
  end, M.choices)
end

--- Ask the user about `request`; calls `done({ decision = …, reason = … })` once. `live()`
--- (optional) says whether the question still stands (no reason is asked for after that).
function M.ask(request, done, live)
  local choices = M.offered(request)
  local labels = {}
  for _, choice in ipairs(choices) do
    table.insert(labels, choice.label:format(request.tool))
  end
  local ok, failure = pcall(vim.ui.select, labels, { prompt = M.prompt(request) }, function(_, index)
    local choice = index and choices[index]
    if not choice then
      return done({ decision = 'deny', reason = 'the user dismissed the question' })
    end
    if choice.decision ~= 'deny' or (live and not live()) then
      return done({ decision = choice.decision })
    end
    vim.ui.input({ prompt = 'Reason for the model (optional): ' }, function(reason)
      done({ decision = 'deny', reason = (reason and reason ~= '') and reason or nil })
    end)
  end)
  if not ok then
    -- the default prompt (inputlist) ends with the error of a message shown while it waits (another
    -- plugin's, a daemon's exit notice): nothing was chosen. Shown as the message it was (an echo, not
    -- an error, which would end the next prompt too), and the question is asked again while it stands.
    local message = tostring(failure):gsub('^Vim:', '')
    vim.api.nvim_echo({ { message, 'ErrorMsg' } }, true, {})
    if not live or live() then
      return M.ask(request, done, live)
    end
  end
end

--- The `switchman/approve` request handler (`root`: the workspace of the daemon asking).
function M.handle(_, request, _, root)
  local key = 'approve-' .. tostring(request.id)
  local answer = nil
  local state = { root = root, wake = function() end }
  pending[key] = state
  local function settled()
    return answer ~= nil or state.withdrawn ~= nil
  end
  local tab, from = nil, vim.api.nvim_get_current_tabpage()
  if request.tool == 'delegate' then
    tab = M.show_delegation(request)
  elseif several_lines(request.command) then
    tab = show_lines(M.command_lines(request), ('switchman://%s/command'):format(request.id))
  elseif request.tool_class == 'write' and given(request.path) then
    tab = M.show_diff(request)
  end
  if tab then
    -- drawn before the question is asked: a prompt (vim.ui.select's inputlist) waits without drawing,
    -- so the screen went on showing the chat and the diff stayed hidden behind the question about it
    vim.cmd('redraw')
  end
  M.ask(request, function(result)
    answer = answer or result
    state.wake()
  end, function()
    return state.withdrawn == nil
  end)
  -- Neovim 0.10+ runs a server request's handler in a coroutine: waiting there by yielding
  -- lets other questions be answered meanwhile (two workers asking at once). vim.wait
  -- would nest them instead: an answered question could not return before a later one.
  local co, is_main = coroutine.running()
  if not settled() and co and not is_main then
    local resumed = false
    state.wake = function()
      if not resumed and settled() then
        resumed = true
        vim.schedule(function()
          coroutine.resume(co)
        end)
      end
    end
    local timer = vim.defer_fn(function()
      if not settled() then
        answer = { decision = 'deny', reason = 'no answer' }
        state.wake()
      end
    end, M.wait_ms)
    coroutine.yield()
    pcall(function()
      timer:stop()
      timer:close()
    end)
  else
    vim.wait(M.wait_ms, settled, 50)
  end
  pending[key] = nil
  close(tab, from)
  -- a worker's question goes under its line in the chat, answered, as the chat drawn from the session has it
  -- and a `/delegate`'s own question (its turn id is its delegation's id) above its worker's line
  local function answered(result, outcome, reason)
    if request.is_worker == true then
      require('switchman.chat.workers').asked(root, request.session_id,
        { id = request.id, title = request.title, command = request.command, diff = request.diff, outcome = outcome,
          reason = reason })
    elseif request.tool == 'delegate' then
      require('switchman.chat.workers').start_asked(root, request.turn_id, { id = request.id, title = request.title,
        tier = request.tier, model = request.model, routed_by = request.routed_by, worker_tools = request.worker_tools,
        task = request.task, outcome = outcome, reason = reason })
    end
    return result
  end
  if answer == nil and state.withdrawn then
    -- the title's control characters made visible (`^M`, `<202e>`) as the question showed them: printed
    -- as they were, a carriage return in a command's title redrew the message line over its start
    local what = vim.fn.strtrans(given(request.title) and request.title or request.tool)
    vim.notify(('%s: %s'):format(what, state.withdrawn), vim.log.levels.INFO)
    return answered({ decision = 'deny', reason = 'withdrawn' }, 'stopped')
  end
  local stale = answer and answer.decision ~= 'deny' and M.stale(request)
  if stale then
    -- the path from the tool call shown as the question showed it (control characters visible)
    local shown = vim.fn.strtrans('Switchman: not applied: ' .. stale:sub(1, #stale - #MODEL_ADVICE))
    vim.notify(shown, vim.log.levels.WARN)
    -- the user allowed it: the model must not be told they refused it
    return answered({ decision = 'deny', reason = stale, refused_by = 'editor' }, 'not_applied', stale)
  end
  if not answer then
    return answered({ decision = 'deny', reason = 'no answer' }, 'timed_out')
  end
  local outcome = answer.decision == 'deny' and 'denied' or answer.decision == 'allow_always' and 'allowed_always'
    or 'allowed_once'
  return answered(answer, outcome, answer.reason)
end

return M
