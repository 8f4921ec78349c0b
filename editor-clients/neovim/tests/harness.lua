-- A tiny test runner for headless Neovim.
--
-- A test file returns a list of { name, fn } cases, run in order; the first failure stops
-- the run. Neovim exits 0 only when every case passed, no Lua error happened anywhere
-- (errors in LSP handlers and scheduled callbacks only show up in v:errmsg) and nothing
-- timed out. Every wait has a timeout; a watchdog ends a run that hangs anyway.
local H = {}

H.TIMEOUT = 20000 -- a bound, not a sleep: a fresh daemon's first turn imports the provider SDK
H.WATCHDOG = 120000
H.notifications = {}

function H.log(...)
  local parts = {}
  for i = 1, select('#', ...) do
    local v = select(i, ...)
    parts[i] = type(v) == 'string' and v or vim.inspect(v)
  end
  io.stderr:write(table.concat(parts, ' ') .. '\n')
end

--- Fail the current case with `message` (and what was seen) unless `cond` holds.
function H.check(cond, message, seen)
  if not cond then
    error(message .. (seen ~= nil and ('\n  seen: ' .. vim.inspect(seen)) or ''), 2)
  end
  return cond
end

function H.eq(expected, actual, message)
  H.check(vim.deep_equal(expected, actual), (message or 'values differ') .. '\n  expected: ' .. vim.inspect(expected),
    actual)
end

--- Wait until `fn()` returns something truthy (at most `timeout` ms); return it. `seen()` (or
--- `seen`, a table) is shown on timeout.
function H.wait_for(what, fn, timeout, seen)
  local result
  local ok = vim.wait(timeout or H.TIMEOUT, function()
    result = fn()
    return result
  end, 20)
  if not ok then
    error(('timed out after %d ms waiting for %s%s'):format(timeout or H.TIMEOUT, what,
      seen and ('\n  seen: ' .. vim.inspect(type(seen) == 'function' and seen() or seen)) or ''), 2)
  end
  return result
end

function H.lines(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr or 0, 0, -1, false)
end

function H.text(bufnr)
  return table.concat(H.lines(bufnr), '\n')
end

--- Wait until buffer `bufnr` contains `needle` (plain text).
function H.wait_text(bufnr, needle, timeout)
  return H.wait_for(('%q in buffer %d'):format(needle, bufnr), function()
    return H.text(bufnr):find(needle, 1, true)
  end, timeout, function()
    return H.lines(bufnr)
  end)
end

--- Wait until `vim.notify` was given a message of `level` (a `vim.log.levels` value; nil: any level)
--- containing each of the plain texts after it (since `H.notifications` was last emptied); return it
--- (`{ message, level }`). The notifications are shown on timeout.
function H.wait_notification(level, ...)
  local needles = { ... }
  local what = ('a notification%s with %s'):format(level and (' of level ' .. level) or '',
    table.concat(vim.tbl_map(function(needle)
      return ('%q'):format(needle)
    end, needles), ' and '))
  return H.wait_for(what, function()
    for _, n in ipairs(H.notifications) do
      local found = level == nil or n.level == level
      for _, needle in ipairs(needles) do
        found = found and type(n.message) == 'string' and n.message:find(needle, 1, true) ~= nil
      end
      if found then
        return n
      end
    end
  end, nil, function()
    return H.notifications
  end)
end

--- Type keys as the user would (mappings apply).
function H.feed(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'mtx', false)
end

--- A request to the fake provider's control API (`/_fake/...`); returns status, decoded body.
function H.fake(method, path, body)
  local url = assert(vim.env.SWITCHMAN_FAKE_URL, 'SWITCHMAN_FAKE_URL is not set')
  local host, port = url:match('^http://([^:/]+):(%d+)')
  local payload = body ~= nil and vim.json.encode(body) or ''
  local request = table.concat({
    method .. ' ' .. path .. ' HTTP/1.1', 'Host: ' .. host, 'Content-Type: application/json',
    'Content-Length: ' .. #payload, 'Connection: close', '', payload,
  }, '\r\n')
  local chunks, done, failure = {}, false, nil
  local tcp = vim.loop.new_tcp()
  tcp:connect(host, tonumber(port), function(err)
    if err then
      failure, done = err, true
      return
    end
    tcp:write(request)
    tcp:read_start(function(read_err, data)
      if read_err or not data then
        failure, done = read_err, true
        tcp:close()
      else
        table.insert(chunks, data)
      end
    end)
  end)
  H.wait_for('the fake provider to answer ' .. path, function()
    return done
  end, 5000)
  H.check(not failure, 'fake provider request failed: ' .. tostring(failure))
  local response = table.concat(chunks)
  local status = tonumber(response:match('^HTTP/1%.%d (%d+)'))
  local json = response:match('\r\n\r\n(.*)$')
  H.check(status == 200, ('fake provider %s %s answered %s'):format(method, path, tostring(status)), response)
  return status, (json and json ~= '') and vim.json.decode(json) or nil
end

--- Queue replies in the fake provider.
function H.script(steps)
  return H.fake('POST', '/_fake/script', steps)
end

--- Replace vim.ui.select with one that picks the first item `pick(item, label)` accepts.
--- Returns the labels of the last question (the same table, refilled at each question) and
--- the list of every question's labels, in the order asked.
function H.stub_select(pick)
  local seen, asked = {}, {}
  vim.ui.select = function(items, opts, on_choice)
    for i = #seen, 1, -1 do
      seen[i] = nil
    end
    for _, item in ipairs(items) do
      table.insert(seen, opts.format_item and opts.format_item(item) or tostring(item))
    end
    table.insert(asked, vim.deepcopy(seen))
    for i, item in ipairs(items) do
      if pick(item, seen[i]) then
        return on_choice(item, i)
      end
    end
    on_choice(nil, nil)
  end
  return seen, asked
end

--- Type `message` into `chat`'s input and send it (<C-s>).
function H.send_chat(chat, message)
  vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.view.input)[1])
  vim.api.nvim_buf_set_lines(chat.view.input, 0, -1, false, { message })
  H.feed('<C-s>')
end

--- Delete `chat`'s buffers (their windows go with them) and open the chat anew, as after a
--- restart: returns the workspace's chat, a new view drawn from the stored session.
function H.reopen_chat(chat)
  local old = { chat.view.transcript, chat.view.input }
  for _, bufnr in ipairs(old) do
    vim.api.nvim_buf_delete(bufnr, { force = true })
  end
  vim.cmd('Switchman chat')
  local reopened = require('switchman.chat').get(chat.root)
  H.check(reopened.view.transcript ~= old[1], 'a new transcript buffer')
  return reopened
end

--- Wait until `chat` has no turn running (showing its transcript and the fake's state on a timeout).
function H.wait_turn(chat)
  H.wait_for('the turn to end', function()
    return chat.turn == nil
  end, 60000, function()
    local _, state = H.fake('GET', '/_fake/state')
    return { H.lines(chat.view.transcript), state }
  end)
end

--- Every running LSP client (`get_clients` from 0.10, `get_active_clients` before).
function H.clients()
  return (vim.lsp.get_clients or vim.lsp.get_active_clients)()
end

--- Process ids of this Neovim's child processes whose command line contains `needle` (Linux).
function H.child_pids(needle)
  local pids = {}
  local self_pid = vim.fn.getpid()
  for _, task in ipairs(vim.fn.glob('/proc/' .. self_pid .. '/task/*/children', false, true)) do
    for pid in table.concat(vim.fn.readfile(task), ' '):gmatch('%d+') do
      local file = io.open('/proc/' .. pid .. '/cmdline', 'rb')
      local cmdline = file and file:read('*a'):gsub('%z', ' ') or ''
      if file then
        file:close()
      end
      if cmdline:find(needle, 1, true) then
        table.insert(pids, tonumber(pid))
      end
    end
  end
  return pids
end

--- The LSP clients attached to a buffer.
function H.buf_clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(bufnr))
end

local function stop_clients()
  for _, client in ipairs(H.clients()) do
    vim.lsp.stop_client(client.id)
  end
  local stopped = vim.wait(3000, function()
    return #H.clients() == 0
  end, 20)
  if not stopped then
    H.log('warning: LSP clients still running at exit: ' .. vim.inspect(vim.tbl_map(function(c)
      return { id = c.id, name = c.name, stopped = c.is_stopped and true }
    end, H.clients())))
  end
end

local function finish(failed)
  stop_clients()
  if failed then
    vim.cmd('cquit 1')
  else
    vim.cmd('qall!')
  end
end

--- Run the cases of the test file at `path` and exit Neovim with the outcome.
function H.main(path)
  local startup_error = vim.v.errmsg
  vim.v.errmsg = ''
  vim.notify = function(message, level)
    table.insert(H.notifications, { message = message, level = level })
    H.log(('  notify[%s]: %s'):format(level or '-', message))
  end
  local watchdog = vim.loop.new_timer()
  watchdog:start(H.WATCHDOG, 0, vim.schedule_wrap(function()
    H.log(('FAIL: the run took longer than %d ms'):format(H.WATCHDOG))
    vim.cmd('cquit 3')
  end))
  local failed = false
  if startup_error ~= '' then
    H.log('FAIL: an error happened during startup: ' .. startup_error)
    failed = true
  end
  local ok, cases = xpcall(dofile, debug.traceback, path)
  if not ok then
    H.log('FAIL: cannot load ' .. path .. ': ' .. cases)
    return finish(true)
  end
  for _, case in ipairs(failed and {} or cases) do
    local started = vim.loop.hrtime()
    local passed, err = xpcall(case[2], debug.traceback)
    if passed and vim.v.errmsg ~= '' then
      passed, err = false, 'a Lua error happened in a callback: ' .. vim.v.errmsg
    end
    local ms = (vim.loop.hrtime() - started) / 1e6
    if not passed then
      H.log(('FAIL %s (%.0f ms)\n%s'):format(case[1], ms, err))
      failed = true
      break
    end
    H.log(('ok   %s (%.0f ms)'):format(case[1], ms))
  end
  watchdog:stop()
  finish(failed)
end

return H
