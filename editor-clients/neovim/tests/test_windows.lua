-- Two editor windows on one workspace (a second daemon on the same data folder): the history
-- shows even when a message is sent before it arrived, and what the other window sends or
-- sets shows in this chat and statusline (`switchman/sessionChanged`, `switchman/status`).
local H = require('harness')
local chat_module = require('switchman.chat')
local client = require('switchman.client')
local config = require('switchman.config')
local switchman = require('switchman')
local workspace = require('switchman.workspace')

vim.env.SWITCHMAN_SESSION_POLL_SECONDS = '0.05' -- the daemons started below check this often

local root = workspace.normalize(vim.env.SWITCHMAN_TEST_WORKSPACE)
local other -- the other window's LSP client
local changes = {} -- the switchman/sessionChanged notifications received
client.on('switchman/sessionChanged', function(_, params)
  table.insert(changes, params)
end)

local function chat()
  return chat_module.get(root)
end

local function transcript_text()
  return H.text(chat().view.transcript)
end

local function count(text, needle)
  local n, from = 0, 1
  while true do
    local at = text:find(needle, from, true)
    if not at then
      return n
    end
    n, from = n + 1, at + #needle
  end
end

--- Whether the chat shows `earlier` above `later`, and each of them and of `others` once.
local function above_and_once(earlier, later, others)
  local text = transcript_text()
  local above, below = text:find(earlier, 1, true), text:find(later, 1, true)
  if not (above and below and above < below) then
    return false
  end
  for _, needle in ipairs(vim.list_extend({ earlier, later }, others)) do
    if count(text, needle) ~= 1 then
      return false
    end
  end
  return true
end

local function wait_idle()
  H.wait_for('the turn to end', function()
    return chat().turn == nil
  end, nil, transcript_text)
end

local has_011 = vim.fn.has('nvim-0.11') == 1

--- Note each answer to `method` from this window's daemon once the chat has handled it; with
--- `hold`, keep the answers from the chat until `release()` (as if they were slow to come).
--- Returns the list of answers noted, those held, and `release` (last intercepted, first released).
local function intercept_answers(method, hold)
  local lsp = client.get(root)
  local own = rawget(lsp, 'request') -- nil from 0.11: the method is in the metatable
  local original = lsp.request
  local answers, held = {}, {}
  lsp.request = function(...)
    local args, n = { ... }, select('#', ...)
    local at = has_011 and 2 or 1 -- `client:request(method, params, handler)` from 0.11
    local handler = args[at + 2]
    if args[at] == method then
      args[at + 2] = function(...)
        local answer = { n = select('#', ...), ... }
        if hold then
          return table.insert(held, function()
            handler(unpack(answer, 1, answer.n))
            table.insert(answers, answer)
          end)
        end
        handler(unpack(answer, 1, answer.n))
        table.insert(answers, answer)
      end
    end
    return original(unpack(args, 1, n))
  end
  return answers, held, function()
    lsp.request = own
    hold = false
    for _, deliver in ipairs(held) do
      deliver()
    end
  end
end

--- Keep this window's notifications of `methods` from the chat until `release()`, which hands
--- them over in the order they came; returns the list of those kept and `release`.
local function hold_notifications(methods)
  local handlers = client.get(root).handlers
  local originals, held = {}, {}
  for _, method in ipairs(methods) do
    originals[method] = handlers[method]
    handlers[method] = function(...)
      table.insert(held, { method = method, n = select('#', ...), ... })
    end
  end
  return held, function()
    for method, original in pairs(originals) do
      handlers[method] = original
    end
    for _, args in ipairs(held) do
      originals[args.method](unpack(args, 1, args.n))
    end
  end
end

--- Open a new chat sending `message` at once, with its history (two requests away) fetched only
--- once `started()` is true; returns after that history was handled.
local function open_with_late_history(message, started)
  local view = chat().view
  vim.cmd('bwipeout! ' .. view.transcript .. ' ' .. view.input) -- a new chat
  local history, _, unwatch = intercept_answers('switchman/session', false)
  local _, listed, release_listing = intercept_answers('switchman/sessions', true)
  chat_module.open(root, message)
  H.wait_for('the message under way, the listing held back', function()
    return #listed > 0 and started()
  end, 40000)
  release_listing()
  H.wait_for('the history to arrive', function()
    return #history > 0
  end)
  unwatch()
end

--- Send a request through the other window's daemon and wait for its answer.
local function other_request(method, params)
  local done, answer
  client.call(other, 'request', method, params, function(err, result)
    done, answer = true, { err = err, result = result }
  end)
  H.wait_for(method .. ' from the other window', function()
    return done
  end)
  H.check(answer.err == nil, method .. ' failed', answer.err)
  return answer.result
end

return {
  {
    'the history shows when a message is sent before it has loaded',
    function()
      H.script({ { kind = 'text', chunks = { 'the first answer' } } })
      vim.cmd('Switchman chat')
      vim.cmd('Switchman chat an earlier message')
      wait_idle()
      local view = chat().view
      vim.cmd('bwipeout! ' .. view.transcript .. ' ' .. view.input) -- a new chat next time
      H.script({ { kind = 'text', chunks = { 'the second answer' } } })
      -- Sent at once: the history (two requests away) arrives after the message went out.
      chat_module.open(root, 'a message sent at once')
      H.check(chat().view.empty == false, 'the message shows before any history')
      wait_idle()
      H.wait_for('the history above the new message, each message once', function()
        return above_and_once('an earlier message', 'a message sent at once', { 'the first answer', 'the second answer' })
      end, nil, transcript_text)
    end,
  },
  {
    "history that arrives before the running turn's id is known does not show its message twice",
    function()
      H.script({ { kind = 'text', chunks = { 'a held ', 'answer' }, fault = { kind = 'stall', after_chunks = 1 } } })
      -- The history is fetched once the turn has started (its message is stored); the turn's id
      -- (switchman/routeDecided) comes after the history.
      local routes, release_routes = hold_notifications({ 'switchman/routeDecided', 'switchman/chatDelta' })
      open_with_late_history('sent before its id is known', function()
        return #routes > 0
      end)
      H.eq(1, count(transcript_text(), 'sent before its id is known'), 'the message shows once')
      release_routes()
      H.wait_text(chat().view.transcript, 'a held ')
      H.check(chat().turn ~= nil, 'the turn is still running')
      H.check(above_and_once('a message sent at once', 'sent before its id is known', {}),
        'the history above the message, each message once while the turn runs', transcript_text())
      H.fake('POST', '/_fake/release')
      wait_idle()
      H.wait_for('the session redrawn, each message once', function()
        local text = transcript_text()
        return not chat().reload_after_turn and count(text, 'sent before its id is known') == 1
          and count(text, 'a held answer') == 1 and count(text, 'an earlier message') == 1
      end, nil, transcript_text)
    end,
  },
  {
    'a /delegate sent before the history has loaded shows once',
    function()
      H.stub_select(function(_, label)
        return label == 'Allow once'
      end)
      local _, calls = H.fake('GET', '/_fake/requests')
      local before = #calls.requests
      H.script({ { kind = 'text', chunks = { 'the worker ', 'found it' }, fault = { kind = 'stall', after_chunks = 1 } } })
      -- The history is fetched once the worker runs (the command is stored before it starts).
      open_with_late_history('/delegate fast look into it', function()
        local _, now = H.fake('GET', '/_fake/requests')
        return #now.requests > before
      end)
      H.check(chat().turn ~= nil, 'the /delegate is still running')
      H.eq(1, count(transcript_text(), '/delegate fast look into it'), 'the command shows once')
      H.fake('POST', '/_fake/release')
      wait_idle()
      H.wait_for('the session drawn as stored, each message once, the history above', function()
        return above_and_once('sent before its id is known', '/delegate fast look into it',
          { 'the worker found it', 'an earlier message' })
      end, 40000, transcript_text)
    end,
  },
  {
    'a refused command shown before the history arrived survives the redraw, in its place',
    function()
      -- Nothing of `/modle opus` is stored: its lines exist only in this chat. The history that
      -- arrives after it makes the chat draw the session as stored (a command was sent), which
      -- used to drop them.
      open_with_late_history('/modle opus', function()
        local text = transcript_text()
        return chat().turn == nil and text:find('/modle opus', 1, true) ~= nil and text:find('✗', 1, true) ~= nil
      end)
      H.wait_for('the session drawn as stored', function()
        return chat().unidentified == nil and chat().early_history == nil
      end, nil, transcript_text)
      H.check(above_and_once('/delegate fast look into it', '/modle opus', { 'the worker found it' }),
        'the refused command below the history, once', transcript_text())
      local text = transcript_text()
      local refused = text:find('/modle opus', 1, true)
      H.check(text:find('✗', refused, true) ~= nil, 'its failure stays under it', text)
    end,
  },
  {
    "a turn's notice survives the redraw after history that arrived during the turn",
    function()
      H.script({
        { kind = 'error', status = 500, message = 'boom' },
        { kind = 'text', chunks = { 'answered ', 'after a retry' }, fault = { kind = 'stall', after_chunks = 1 } },
      })
      open_with_late_history('a message that is retried', function()
        return transcript_text():find('Retrying', 1, true) ~= nil
      end)
      H.wait_text(chat().view.transcript, 'answered ')
      H.check(chat().reload_after_turn, 'the chat is to be drawn as stored once the turn ends')
      local redrawn, _, unwatch = intercept_answers('switchman/session', false)
      H.fake('POST', '/_fake/release')
      wait_idle()
      H.wait_for('the session redrawn', function()
        return #redrawn > 0 and not chat().reload_after_turn
      end, nil, transcript_text)
      unwatch()
      H.eq(1, count(transcript_text(), 'answered after a retry'), 'the answer once')
      local text = transcript_text()
      local sent, notice = text:find('a message that is retried', 1, true), text:find('Retrying', 1, true)
      local answer = text:find('answered after a retry', 1, true)
      H.check(notice ~= nil and sent < notice and notice < answer, 'the notice between the message and its answer', text)
    end,
  },
  {
    'a message sent in the other window, and its answer, show in this chat',
    function()
      local initialized = false
      local id = vim.lsp.start_client({
        name = 'other-window',
        cmd = config.server_cmd(),
        root_dir = root,
        workspace_folders = { { uri = workspace.uri(root), name = root } },
        capabilities = vim.lsp.protocol.make_client_capabilities(),
        on_init = function()
          initialized = true
        end,
      })
      H.wait_for('the other window\'s daemon to start', function()
        return initialized
      end)
      other = vim.lsp.get_client_by_id(id)
      H.script({ { kind = 'text', chunks = { 'answered in the other window' } } })
      local result = other_request('switchman/chat', { workspace = workspace.uri(root), message = 'sent from the other window' })
      H.eq(chat().session_id, result.session_id, 'one shared session')
      H.wait_for('the other window\'s turn in this chat', function()
        local text = transcript_text()
        return text:find('sent from the other window', 1, true) and text:find('answered in the other window', 1, true)
          and text:find('an earlier message', 1, true)
      end, nil, transcript_text)
      -- its text can be drawn while that turn still runs there (nothing to rate yet); the
      -- other window's end of it redraws this chat with the turn to rate
      H.wait_for('g+ to rate the last answer shown', function()
        return chat().last_turn_id == result.turn_id
      end, nil, function()
        return { expected = result.turn_id, last_turn_id = chat().last_turn_id }
      end)
    end,
  },
  {
    'a sticky model set in the other window shows in this statusline',
    function()
      other_request('switchman/setModel', { workspace = workspace.uri(root), model = 'opus' })
      H.wait_for('the statusline to show the other window\'s model', function()
        return switchman.statusline() == 'Switchman: opus [sticky]'
      end, nil, switchman.statusline)
    end,
  },
  {
    "g+ and cancel on the other window's answer still being written say so; g+ rates it once it has ended",
    function()
      H.script({ { kind = 'text', chunks = { 'written over ', 'there' }, fault = { kind = 'stall', after_chunks = 1 } } })
      local done
      client.call(other, 'request', 'switchman/chat', { workspace = workspace.uri(root), message = 'a slow one over there' },
        function(err, result)
          done = { err = err, result = result }
        end)
      H.wait_for("the other window's answer, still running, in this chat", function()
        local text = transcript_text()
        return text:find('written over', 1, true) and text:find('still running (started in another window', 1, true)
      end, nil, transcript_text)
      H.notifications = {}
      vim.cmd('Switchman feedback up') -- the daemon refused it: no such ended turn
      H.wait_notification(vim.log.levels.INFO, 'the last answer is still being written in another window')
      vim.cmd('Switchman cancel') -- it said "no turn is running"
      H.wait_notification(nil, 'This turn is running in another editor window', 'stop it from that window')
      H.check(done == nil, 'the other window\'s turn goes on')
      H.fake('POST', '/_fake/release')
      H.wait_for("the other window's turn to end", function()
        return done ~= nil
      end)
      H.check(done.err == nil, 'the chat failed', done.err)
      H.wait_for('the ended answer drawn here', function()
        return chat().last_turn_id == done.result.turn_id
      end, nil, transcript_text)
      H.notifications = {}
      vim.cmd('Switchman feedback up')
      H.wait_notification(nil, 'noted 👍 for the last answer')
    end,
  },
  {
    'a change from the other window during a turn here redraws the chat once the turn ended',
    function()
      H.script({ { kind = 'text', chunks = { 'slow ', 'answer' }, fault = { kind = 'stall', after_chunks = 1 } } })
      vim.cmd('Switchman chat a long one here')
      H.wait_text(chat().view.transcript, 'slow ')
      local seen = #changes
      other_request('switchman/setModel', { workspace = workspace.uri(root), model = 'sonnet' })
      H.wait_for('the change to be noted for after the turn', function()
        return #changes > seen and chat().reload_after_turn
      end, nil, function()
        return { changes = changes, turn = chat().turn, text = transcript_text() }
      end)
      H.check(chat().turn ~= nil and transcript_text():find('slow ', 1, true), 'the running turn is left alone',
        transcript_text())
      H.wait_for('the statusline to show it while the turn runs', function()
        return switchman.statusline():find('sonnet [sticky]', 1, true)
      end, nil, switchman.statusline)
      H.check(chat().turn ~= nil, 'the turn is still running')
      H.fake('POST', '/_fake/release')
      wait_idle()
      H.wait_for('the session redrawn once the turn ended, the statusline updated', function()
        return not chat().reload_after_turn and count(transcript_text(), 'slow answer') == 1
          and count(transcript_text(), 'a long one here') == 1 and count(transcript_text(), 'an earlier message') == 1
          and switchman.statusline() == 'Switchman: sonnet [sticky]'
      end, nil, function()
        return { transcript_text(), switchman.statusline() }
      end)
      client.call(other, 'stop')
    end,
  },
}
