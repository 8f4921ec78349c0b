-- `:Switchman delegate`: the user hands a task to a worker. With a range the selected lines go
-- with `/delegate`; with nothing to delegate the daemon asks one question and no worker runs.
local H = require('harness')
local chat_module = require('switchman.chat')
local workspace = require('switchman.workspace')

local root = workspace.normalize(vim.env.SWITCHMAN_TEST_WORKSPACE)
local chat

local function wait_idle()
  H.wait_for('the answer', function()
    return chat.turn == nil
  end, 60000, function()
    return H.lines(chat.view.transcript)
  end)
end

local function requests()
  local _, answer = H.fake('GET', '/_fake/requests')
  return answer.requests
end

return {
  {
    'with nothing selected and no request yet, the daemon asks what to delegate',
    function()
      vim.cmd('edit ' .. root .. '/src/app.py')
      vim.cmd('Switchman delegate')
      chat = H.check(chat_module.get(root), 'a chat for the workspace')
      H.wait_text(chat.view.transcript, 'What should the worker do?', 40000)
      wait_idle()
      H.eq(0, #requests(), 'no model was called')
      H.check(next(chat.workers or {}) == nil, 'no worker line', H.lines(chat.view.transcript))
    end,
  },
  {
    "the selected lines go to a fast worker, approved first; its line and answer show in the chat",
    function()
      H.script({ { kind = 'text', chunks = { 'main returns', ' 42.' } } })
      local seen = H.stub_select(function(_, label)
        return label == 'Allow once'
      end)
      local source = vim.fn.win_findbuf(vim.fn.bufnr(root .. '/src/app.py'))[1]
      H.check(source, 'src/app.py is still shown')
      vim.api.nvim_set_current_win(source)
      H.check(vim.api.nvim_buf_get_name(0):find('src/app.py', 1, true), 'the source buffer is current')
      vim.cmd('1,2Switchman delegate fast explain this')
      H.wait_text(chat.view.transcript, 'main returns 42.', 40000)
      wait_idle()
      H.check(#seen > 0 and seen[1] == 'Allow once', 'the worker may edit, so the delegation was approved', seen)
      local text = H.text(chat.view.transcript)
      H.check(text:find('✓ worker fast · haiku · completed · 1 turn', 1, true), 'the worker line, completed',
        H.lines(chat.view.transcript))
      -- its question, answered, right above the worker line, as the chat drawn from the session has it
      H.check(text:find('\n    %? Delegate to a fast worker that may [^\n]* — Allowed once%.\n'
        .. '      worker on fast tier · haiku · may use [^\n]*edit_file[^\n]*\n  ✓ worker fast · haiku · completed'),
        "the /delegate's question, with the worker's tier and tools, above its worker line",
        H.lines(chat.view.transcript))
      local body = requests()[1].body
      local first = body.messages[1].content[1].text
      H.check(first:find('explain this\n\nAttached selection src/app.py (lines 1-2):', 1, true), 'the task and selection',
        first)
      H.check(first:find('return 42', 1, true), 'the selected text', first)
    end,
  },
  {
    "the worker's transcript starts with its handoff: from you, to a fast subagent worker",
    function()
      local _, known = next(chat.workers or {})
      H.check(known and known.update.worker_session_id, 'the worker of the last test', chat.workers)
      require('switchman.chat.workers').open(root, known.update.worker_session_id)
      H.wait_for('the worker transcript', function()
        return vim.api.nvim_buf_get_name(0):find('switchman://session/' .. known.update.worker_session_id, 1, true) ~= nil
      end)
      local bufnr = vim.api.nvim_get_current_buf()
      H.wait_text(bufnr, '## Handoff')
      local text = H.text(bufnr)
      H.check(text:find('From:    you (/delegate), profile ', 1, true), 'from the user', H.lines(bufnr))
      H.check(text:find('To:      fast worker, profile subagent (chosen)', 1, true), 'to a fast subagent worker',
        H.lines(bufnr))
      vim.cmd('tabclose')
    end,
  },
  {
    "reopening the chat rebuilds the /delegate: the command, its question, its worker's line and the answer",
    function()
      vim.cmd('Switchman chat')
      vim.cmd('only')
      chat = H.reopen_chat(chat)
      H.wait_text(chat.view.transcript, 'main returns 42.')
      local text = H.text(chat.view.transcript)
      local command = text:find('## You\n/delegate fast explain this\n', 1, true)
      local line = text:find('  ✓ worker fast · haiku · completed · 1 turn · $', 1, true)
      local answer = text:find('## Switchman [/delegate]\nmain returns 42.', 1, true)
      H.check(command and line and answer and command < line and line < answer,
        'the command, then the worker line, then its answer', H.lines(chat.view.transcript))
      -- the question its start asked, answered, right above the worker line (it was not drawn)
      local question = text:find('\n/delegate fast explain this\n    %? Delegate to a fast worker that may [^\n]* — Allowed once%.\n'
        .. '      worker on fast tier · haiku · may use [^\n]*edit_file[^\n]*\n  ✓ worker fast · haiku · completed')
      H.check(question, "the /delegate's question, with the worker's tier and tools, above its worker line",
        H.lines(chat.view.transcript))
    end,
  },
  {
    "the session's transcript shows the /delegate under its own heading, with the worker line",
    function()
      H.check(chat.session_id, 'the reopened chat knows its session')
      require('switchman.sessions').open(root, chat.session_id)
      H.wait_for('the session transcript', function()
        return vim.api.nvim_buf_get_name(0):find('switchman://session/' .. chat.session_id, 1, true) ~= nil
      end)
      local bufnr = vim.api.nvim_get_current_buf()
      H.wait_text(bufnr, '## You delegated')
      local text = H.text(bufnr)
      local heading = text:find('## You delegated\n### You\n/delegate fast explain this\n', 1, true)
      local line = text:find('  ✓ worker fast · haiku · completed · 1 turn · $', 1, true)
      local answer = text:find('### Worker\nmain returns 42.', 1, true)
      H.check(heading and line and answer and heading < line and line < answer, 'command, worker line, answer',
        H.lines(bufnr))
      H.check(text:find('\n/delegate fast explain this\n    %? Delegate to a fast worker that may [^\n]* — Allowed once%.\n'
        .. '      worker on fast tier · haiku · may use [^\n]*\n  ✓ worker fast · '), "its question above the worker line",
        H.lines(bufnr))
      vim.cmd('tabclose')
    end,
  },
  {
    ':Switchman delegate ultra (no such tier) is refused naming the tiers, and no worker runs',
    function()
      local before = #requests()
      vim.cmd('Switchman delegate ultra')
      H.wait_text(chat.view.transcript, "✗ 'ultra' is not a tier or profile. Tiers: fast, balanced, deep;")
      wait_idle()
      H.eq(before, #requests(), 'no model was called')
      H.check(not H.text(chat.view.transcript):find('worker balanced', 1, true), 'no worker line',
        H.lines(chat.view.transcript))
    end,
  },
  {
    "a /delegate stopped while its question waited says why as the daemon records it, whichever comes first",
    function()
      local workers = require('switchman.chat.workers')
      local function question()
        return { id = 'q', title = 'Delegate to a fast worker that may change files', tier = 'fast',
          worker_tools = { 'edit_file' }, outcome = 'stopped' }
      end
      local function update(id, status)
        local ended = status == 'cancelled'
        return { tool_use_id = id, source = 'user', session_id = chat.session_id, tier = 'fast', task = 'tidy ' .. id,
          status = status, turns = 0, cost_usd = '0', error = ended and 'cancelled_by_user' or vim.NIL,
          detail = ended and 'cancelled while waiting for approval' or 'waiting for a free worker' }
      end
      local want = '    ? Delegate to a fast worker that may change files — Not answered: cancelled while waiting for approval; '
        .. 'nothing happened.'
      local function above(id)
        local lines = H.lines(chat.view.transcript)
        for i, line in ipairs(lines) do
          if line:find('tidy ' .. id, 1, true) then
            return { lines[i - 2], lines[i - 1] }
          end
        end
        return lines
      end
      -- the question's answer (withdrawn) first, then the delegation's end
      workers.start_asked(root, 'user_stop1', question())
      workers.show(chat, update('user_stop1', 'cancelled'))
      H.eq({ want, '      worker on fast tier · may use edit_file' }, above('user_stop1'), 'the end says why')
      -- one shown while it waited for a worker slot, its question withdrawn, then its end
      workers.show(chat, update('user_stop2', 'queued'))
      workers.start_asked(root, 'user_stop2', question())
      workers.show(chat, update('user_stop2', 'cancelled'))
      H.eq({ want, '      worker on fast tier · may use edit_file' }, above('user_stop2'), 'said again as it ends')
    end,
  },
  {
    "a turn's worker lines share their decimals as their costs come (one showed $0.00 beside $0.00004)",
    function()
      local workers = require('switchman.chat.workers')
      local function update(id, usd)
        return { tool_use_id = id, turn_id = 'T_costs', session_id = chat.session_id, source = 'planner', tier = 'fast',
          task = 'costs ' .. id, status = 'completed', turns = 1, cost_usd = usd, model = vim.NIL, error = vim.NIL }
      end
      local function line(id)
        for _, text in ipairs(H.lines(chat.view.transcript)) do
          if text:find('costs ' .. id, 1, true) then
            return text
          end
        end
      end
      workers.show(chat, update('c1', '0'))
      H.check(line('c1'):find(' · $0.00 — ', 1, true), 'alone: as before', line('c1'))
      workers.show(chat, update('c2', '0.00004'))
      H.check(line('c2'):find(' · $0.00004 — ', 1, true), 'the new line', line('c2'))
      H.check(line('c1'):find(' · $0.00000 — ', 1, true), 'the line above takes its decimals', line('c1'))
      workers.show(chat, update('c1', '0.0412'))
      H.check(line('c1'):find(' · $0.04120 — ', 1, true), 'an update of the first', line('c1'))
      H.check(line('c2'):find(' · $0.00004 — ', 1, true), 'the second keeps its value', line('c2'))
    end,
  },
}
