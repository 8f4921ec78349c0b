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

local function wait_idle()
  H.wait_for('the turn to end', function()
    return chat().turn == nil
  end, nil, transcript_text)
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
        local text = transcript_text()
        local earlier, now = text:find('an earlier message', 1, true), text:find('a message sent at once', 1, true)
        return earlier and now and earlier < now and count(text, 'the first answer') == 1
          and count(text, 'a message sent at once') == 1 and count(text, 'the second answer') == 1
      end, nil, transcript_text)
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
      H.eq(result.turn_id, chat().last_turn_id, 'g+ rates the last answer shown')
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
