-- Delegation in the chat: a live line per worker, :Switchman workers (transcript, stop), and
-- workers in the sessions picker. The planner (sonnet, the global default) is scripted to call
-- `delegate`; the worker's reply stalls so its line can be seen while it runs.
local H = require('harness')
local chat_module = require('switchman.chat')
local workers = require('switchman.chat.workers')
local workspace = require('switchman.workspace')

local root = workspace.normalize(vim.env.SWITCHMAN_TEST_WORKSPACE)
local chat
local first_footer -- the first test's answer footer: `{ total, workers }` costs

local function transcript()
  return chat.view.transcript
end

local function send(message)
  vim.api.nvim_buf_set_lines(chat.view.input, 0, -1, false, { message })
  chat:submit()
end

local function worker_lines()
  return vim.tbl_filter(function(line)
    return line:match('^  %S+ worker ') ~= nil
  end, H.lines(transcript()))
end

local function wait_idle()
  H.wait_for('the turn to end', function()
    return chat.turn == nil
  end, nil, function()
    return H.lines(transcript())
  end)
end

--- The planner delegates one task (on `tier`, default fast); the worker's answer stalls after its
--- first chunk.
local function script_delegation(task, worker_chunks, final, tier)
  H.script({
    { kind = 'tool_call', name = 'delegate', id = 'toolu_' .. task:gsub('%W', ''):sub(1, 12),
      -- read-only, so the delegation needs no approval (that prompt is tested over LSP)
      input = { tier = tier or 'fast', task = task, context = { mode = 'minimal' }, allowed_tools = { 'read_file' } } },
    { kind = 'text', chunks = worker_chunks, fault = { kind = 'stall', after_chunks = 1 } },
    { kind = 'text', chunks = { final } },
  })
end

--- Run `:Switchman workers`, pick the worker whose label has `word`, then `action` on it;
--- returns what the pickers were shown: each one's labels, the workers list first.
local function pick_worker(word, action)
  local _, asked = H.stub_select(function(item, label)
    return (type(item) == 'table' and label:find(word, 1, true)) or item == action
  end)
  vim.cmd('Switchman workers')
  return asked
end

--- Run `command` with a picker that picks nothing; returns the labels it was shown, once shown.
local function listed_by(command, what)
  local seen = H.stub_select(function()
    return false
  end)
  vim.cmd(command)
  H.wait_for(what, function()
    return #seen > 0
  end, nil, seen)
  return seen
end

local stalls = 0
local function wait_stall()
  stalls = stalls + 1
  H.fake('GET', ('/_fake/state?wait_stalls=%d&timeout=20'):format(stalls))
end

--- The planner delegates `task` (the worker streams `chunk`, then stalls); the planner's session
--- once its worker runs.
local function running_worker(task, chunk)
  vim.cmd('Switchman chat')
  script_delegation(task, { chunk }, 'Unused.')
  send(task:sub(1, 1):lower() .. task:sub(2) .. ', via a worker')
  H.wait_text(transcript(), '⟳ worker fast · haiku · running · 1 turn')
  wait_stall()
  -- the daemon has read the worker's first output (the fake's stall comes as it sends it), so it
  -- has also marked the call as sent, which it does on the loop pass after the request left: a
  -- daemon killed before that has no record of the call to charge
  H.wait_for('the worker\'s first output at the daemon', function()
    for _, known in pairs(chat.workers or {}) do
      if known.update.task == task and (known.update.activity or ''):find(chunk, 1, true) then
        return true
      end
    end
    return false
  end)
  return chat.session_id
end

--- Open the stored transcript of session `planner`; its line of the fast worker given `task`, and
--- the transcript's buffer.
local function stored_worker_line(planner, task)
  require('switchman.sessions').open(root, planner)
  H.wait_for('the planner transcript', function()
    return vim.api.nvim_buf_get_name(0):find('switchman://session/' .. planner, 1, true) ~= nil
  end)
  local bufnr = vim.api.nvim_get_current_buf()
  H.wait_text(bufnr, task)
  return vim.tbl_filter(function(l)
    return l:find(' worker fast · ', 1, true) and l:find(task, 1, true)
  end, H.lines(bufnr))[1], bufnr
end

return {
  {
    'a delegation shows as one worker line that updates in place until the worker ends',
    function()
      vim.cmd('Switchman chat')
      chat = H.check(chat_module.get(root), 'a chat for the workspace')
      script_delegation('List the functions in src/app.py', { 'Reading src/app.py', ' - found main()' },
        'The worker found one function: main().')
      send('plan the refactor of src/app.py')
      -- The first provider request loads the SDK: slow on a busy machine.
      H.wait_text(transcript(), '⟳ worker fast · haiku · running', 40000)
      wait_stall()
      H.eq(1, #worker_lines(), 'one line for the running worker', H.lines(transcript()))
      H.check(worker_lines()[1]:find('List the functions in src/app.py', 1, true), 'the line names the task',
        worker_lines())
      -- its time goes on while the worker works silently (it stayed at its last update's, e.g. 0.3s)
      local function seconds()
        return tonumber(worker_lines()[1]:match(' · ([%d.]+)s — ')) or 0
      end
      local before = seconds()
      H.wait_for('the running time to go on', function()
        return seconds() >= before + 1
      end, 5000, worker_lines)
      H.fake('POST', '/_fake/release')
      H.wait_text(transcript(), 'The worker found one function: main().')
      wait_idle()
      local lines = worker_lines()
      H.eq(1, #lines, 'still one line for the worker, now finished', H.lines(transcript()))
      H.check(lines[1]:find('✓ worker fast · haiku · completed · 1 turn · $', 1, true), 'completed with its cost',
        lines)
      local text = H.text(transcript())
      local at_worker = text:find(' worker fast · ', 1, true)
      H.check(at_worker < text:find('The worker found one function', 1, true), 'the worker line is inside the answer',
        H.lines(transcript()))
      -- the answer's footer counts the worker in, as VS Code's badge does (it showed the planner's own cost)
      local share = lines[1]:match(' · %$([%d.]+) · ')
      local function footer()
        return vim.tbl_filter(function(line)
          return line:match('^  sonnet · .* out tokens$') ~= nil
        end, H.lines(transcript()))[1]
      end
      local total, named = (footer() or ''):match('· %$([%d.]+) incl%. workers %$([%d.]+) · ')
      H.check(total and tonumber(named) == tonumber(share) and tonumber(total) > tonumber(share),
        "the footer's cost includes the worker's, naming its share", { footer(), lines[1] })
      local live = footer()
      chat:reload() -- drawn again from the session, as after a restart
      H.wait_for('the chat drawn from the session', function()
        return footer() == live
      end, nil, function()
        return { live, H.lines(transcript()) }
      end)
      first_footer = { total = total, workers = named }
    end,
  },
  {
    ':Switchman workers lists the worker and opens its transcript',
    function()
      local seen = pick_worker('haiku', 'Open transcript')
      H.wait_for('the worker transcript', function()
        return vim.api.nvim_buf_get_name(0):find('switchman://session/', 1, true) ~= nil
      end, nil, seen)
      local bufnr = vim.api.nvim_get_current_buf()
      H.wait_text(bufnr, 'found main()')
      H.check(H.text(bufnr):find('List the functions in src/app.py', 1, true), "the worker's prompt is there",
        H.lines(bufnr))
      H.check(seen[1][1]:find('✓ worker fast · haiku · completed', 1, true), 'the list shows the worker live state',
        seen)
      vim.cmd('close')
    end,
  },
  {
    "the planner's stored transcript shows the worker line with its recorded model, turns and cost",
    function()
      require('switchman.sessions').open(root, chat.session_id)
      H.wait_for('the planner transcript', function()
        return vim.api.nvim_buf_get_name(0):find('switchman://session/' .. chat.session_id, 1, true) ~= nil
      end)
      local bufnr = vim.api.nvim_get_current_buf()
      H.wait_text(bufnr, '✓ worker fast · haiku · completed · 1 turn · $')
      local text = H.text(bufnr)
      local call, line = text:find('⚙ delegate', 1, true), text:find('✓ worker fast', 1, true)
      local result = text:find('✓ delegate:', 1, true)
      H.check(call and result and call < line and line < result, 'between the call and its result', H.lines(bufnr))
      -- the turn's heading has its answer's total, the worker's included and named (it had the planner's own cost)
      local heading = vim.tbl_filter(function(l)
        return l:match('^## Turn 1 · ') ~= nil
      end, H.lines(bufnr))[1]
      H.eq(('## Turn 1 · sonnet · $%s incl. workers $%s · completed'):format(first_footer.total,
        first_footer.workers), heading, "the turn heading has the footer's total, workers included")
      vim.cmd('tabclose')
    end,
  },
  {
    ':Switchman workers stops a running worker; the planner carries on',
    function()
      vim.cmd('Switchman chat')
      -- The planner runs on sonnet (balanced): the tier floor caps this "deep" worker at balanced.
      script_delegation('Count the lines of src/app.py', { 'Counting', ' lines: 2' }, 'The worker was stopped.', 'deep')
      send('count the lines, via a worker')
      H.wait_text(transcript(), '⟳ worker balanced (capped from deep) · sonnet · running')
      H.wait_text(transcript(), 'Count the lines of src/app.py')
      wait_stall()
      local seen = pick_worker('running', 'Stop this worker')
      H.wait_text(transcript(), '■ worker balanced (capped from deep) · sonnet · cancelled')
      H.wait_text(transcript(), 'The worker was stopped.')
      wait_idle()
      H.check(not H.text(transcript()):find('(cancelled)', 1, true), 'the planner turn itself was not cancelled',
        H.lines(transcript()))
      H.eq(2, #worker_lines(), 'one line per worker', { lines = H.lines(transcript()), seen = seen })
      H.fake('POST', '/_fake/release')
    end,
  },
  {
    ':Switchman sessions workers lists workers under their planner; :Switchman sessions leaves them out',
    function()
      local seen = listed_by('Switchman sessions', 'the sessions list')
      H.check(not table.concat(seen, '\n'):find('↳', 1, true), 'no workers by default', seen)
      seen = listed_by('Switchman sessions workers', 'the sessions list with workers')
      local workers_seen = vim.tbl_filter(function(label)
        return label:find('↳', 1, true) ~= nil
      end, seen)
      H.eq(2, #workers_seen, 'both workers, nested', seen)
    end,
  },
  {
    'pure: the worker line names tier, model, status, turns, cost, time, task and activity',
    function()
      local line = workers.line(root, {
        tier = 'fast', model = 'anthropic:claude-haiku-4-5', status = 'running', turns = 1, cost_usd = '0.00042',
        elapsed_seconds = 1.24, task = 'Rename\nfoo', activity = 'calling read_file',
      })
      H.eq('  ⟳ worker fast · haiku · running · 1 turn · $0.00042 · 1.2s — Rename foo — calling read_file', line)
      local failed = workers.line(root, { tier = 'deep', model = vim.NIL, status = 'failed', turns = 0,
        cost_usd = '0', elapsed_seconds = vim.NIL, task = 't', activity = vim.NIL, error = 'no_model_available_for_tier' })
      H.eq('  ✗ worker deep · not started · failed · 0 turns · $0.00 — t — no_model_available_for_tier',
        failed)
      local stopped = workers.line(root, { tier = 'fast', model = 'anthropic:claude-haiku-4-5', status = 'cancelled',
        turns = 1, cost_usd = '0.0019', estimated_usd = '0.0019', elapsed_seconds = 2, task = 't', error = 'cancelled_by_user',
        detail = 'the user stopped this worker' })
      H.eq('  ■ worker fast · haiku · cancelled · 1 turn · ~$0.0019 (estimated) · 2.0s — t — '
        .. 'stopped: the user stopped this worker',
        stopped, 'a worker stopped before the provider reported usage: its cost is an estimate, and says so')
      local part = workers.line(root, { tier = 'fast', model = 'anthropic:claude-haiku-4-5', status = 'completed',
        turns = 2, cost_usd = '0.0412', estimated_usd = '0.0019', elapsed_seconds = 2, task = 't' })
      H.eq('  ✓ worker fast · haiku · completed · 2 turns · $0.0412 (~$0.0019 estimated) · 2.0s — t', part,
        'the cost and its estimated part with the same decimals, as /cost shows them (it read $0.04 beside $0.0019)')
      local stored = workers.stored(root, {
        messages = {
          { role = 'assistant', content = {
            { type = 'tool_use', id = 'a', name = 'delegate', input = { tier = 'fast', task = 'one' } },
            { type = 'tool_use', id = 'b', name = 'delegate', input = { tier = 'fast', task = 'two' } },
            { type = 'tool_use', id = 'c', name = 'read_file', input = { path = 'x' } } } },
          { role = 'tool', content = {
            { type = 'tool_result', tool_use_id = 'a', content = 'done', is_error = false },
            { type = 'tool_result', tool_use_id = 'b', content = 'delegate failed: cancelled_by_user', is_error = true } } },
        },
        cost = { workers = { { session_id = 'W', parent_tool_use_id = 'a', model = 'anthropic:claude-haiku-4-5',
          cost_usd = '0.0004', turns = 1 } } },
      })
      H.eq('  ✓ worker fast · haiku · completed · 1 turn · $0.0004 — one', stored.a[1])
      H.eq('  ■ worker fast · not started · cancelled · 0 turns · $0.0000 — two — stopped', stored.b[1],
        "the decimals of its turn's other worker line ($0.0004)")
      H.eq(nil, stored.c, 'only delegate calls')
      local refused = workers.stored(root, {
        messages = {
          { role = 'assistant', content = {
            { type = 'tool_use', id = 'r', name = 'delegate', input = { tier = 'fast', task = 'three' } } } },
          { role = 'tool', content = {
            { type = 'tool_result', tool_use_id = 'r', is_error = true, content = "delegate refused: 'allowed_tools' "
              .. "names no tool called 'read_fle'. Nothing was started; correct the call and try again." } } },
        },
      })
      H.eq(nil, refused.r, 'a call refused for its arguments started no worker: no line (it read "— three — failed")')
      local elsewhere = workers.stored(root, {
        turns = { { id = 'T', index = 1, status = 'running' } },
        messages = { { role = 'assistant', turn_id = 'T', content = {
          { type = 'tool_use', id = 'w', name = 'delegate', input = { tier = 'fast', task = 'rename it' } } } } },
      })
      H.eq('  … worker fast · waiting to start · in another window · 0 turns · $0.00 — rename it', elsewhere.w[1],
        'a call of a turn still running (another window asks its approval, or starts its worker): it read '
          .. '"not started · cancelled"')
      local capped = workers.stored(root, {
        messages = { { role = 'assistant', content = {
          { type = 'tool_use', id = 'd', name = 'delegate', input = { tier = 'deep', task = 'prove it' } } } },
          { role = 'tool', content = { { type = 'tool_result', tool_use_id = 'd', content = 'ok', is_error = false } } } },
        delegations = { { tool_use_id = 'd', source = 'planner', tier = 'deep', worker_tier = 'balanced',
          floor_applied = true, model = 'anthropic:claude-sonnet-4-6', status = 'completed' } },
      })
      H.eq('  ✓ worker balanced (capped from deep) · sonnet · completed · 0 turns · $0.00 — prove it', capped.d[1],
        'the tier the worker ran on, as the session recorded it')
      local denied = workers.stored(root, {
        messages = { { role = 'assistant', content = {
          { type = 'tool_use', id = 'e', name = 'delegate', input = { tier = 'deep', task = 'edit it' } } } },
          { role = 'tool', content = { { type = 'tool_result', tool_use_id = 'e',
            content = 'delegate failed: approval_denied', is_error = true } } } },
        delegations = { { tool_use_id = 'e', source = 'planner', tier = 'deep', status = 'failed',
          error = 'approval_denied', detail = 'the user denied it' } },
      })
      H.eq('  ✗ worker deep · not started · failed · 0 turns · $0.00 — edit it — approval_denied: the user denied it',
        denied.e[1], 'why it ended, as the record says it')
      H.eq('$0.000015', workers.usd('0.000015'), 'a tiny cost is not shown as $0.0000')
      H.eq('$0.00004', workers.usd('0.00004'))
      -- two significant digits below a cent, as VS Code's card and the answer's footer (`incl. workers
      -- $0.00012`) show it: four decimals read the same worker as `$0.0001`
      H.eq('$0.00042', workers.usd('0.00042'))
      H.eq('$0.00012', workers.usd('0.00012'))
      H.eq('$0.0064', workers.usd('0.0064'))
      H.eq('$0.0010', workers.usd('0.001'), 'four decimals at least below a cent')
      H.eq('$0.00', workers.usd('0'))
      local waiting = workers.line(root, { tier = 'fast', model = vim.NIL, status = 'queued', turns = 0, cost_usd = '0',
        elapsed_seconds = 0.4, task = 'tidy', activity = vim.NIL, error = vim.NIL,
        detail = 'waiting for a free worker: 2 of 2 running; 1 ahead of it' })
      H.eq('  … worker fast · waiting for a worker slot · queued · 0 turns · $0.00 · 0.4s — tidy — '
        .. 'waiting for a free worker: 2 of 2 running; 1 ahead of it', waiting)
      -- its slot came, but its worker may change files: it waits for the user's answer, not a slot
      local asking = workers.line(root, { tier = 'fast', model = vim.NIL, status = 'awaiting_approval', turns = 0,
        cost_usd = '0', elapsed_seconds = 1.5, task = 'tidy', activity = vim.NIL, error = vim.NIL,
        detail = 'waiting for your approval to start' })
      H.eq('  … worker fast · waiting for approval · awaiting approval · 0 turns · $0.00 · 1.5s — tidy — '
        .. 'waiting for your approval to start', asking)
      H.eq(true, workers.waits_to_start('awaiting_approval'), 'stopped by its planner turn and call, as a queued one')
      H.eq(false, workers.waits_to_start('running'))
      -- a Stop the daemon answers `cancelled: false`: said as it is (was "already ended (starting)")
      local said = {}
      for _, status in ipairs({ 'starting', 'ended', 'completed', 'failed', 'cancelled', 'interrupted', 'odd' }) do
        said[status] = workers.not_stopped(status)
      end
      H.eq({
        starting = 'Switchman: its worker is being started and has no turn to stop yet; stop it again in a moment.',
        ended = 'Switchman: the worker had already ended.',
        completed = 'Switchman: the worker had already finished.',
        failed = 'Switchman: the worker had already failed.',
        cancelled = 'Switchman: the worker had already been stopped.',
        interrupted = 'Switchman: the worker was interrupted: the daemon running it stopped before it ended.',
        odd = 'Switchman: the worker was not stopped (odd).',
      }, said)
      H.eq({ vim.log.levels.WARN, vim.log.levels.INFO }, { select(2, workers.not_stopped('starting')),
        select(2, workers.not_stopped('completed')) })
      local reloaded = workers.stored(root, {
        messages = { { role = 'assistant', content = {
          { type = 'tool_use', id = 'q', name = 'delegate', input = { tier = 'fast', task = 'tidy' } } } } },
        delegations = { { tool_use_id = 'q', source = 'planner', tier = 'fast', worker_tier = vim.NIL, model = vim.NIL,
          status = 'queued', error = vim.NIL, detail = 'waiting for a free worker (1 may run at once)' } },
      })
      H.eq('  … worker fast · waiting for a worker slot · queued · 0 turns · $0.00 — tidy — '
        .. 'waiting for a free worker (1 may run at once)', reloaded.q[1], 'a reload while it still waits')
      -- one that ended shows how long its worker ran, as the session dated its start and end
      local ended = workers.stored(root, {
        messages = { { role = 'assistant', content = {
          { type = 'tool_use', id = 'd', name = 'delegate', input = { tier = 'fast', task = 'count' } },
          { type = 'tool_result', tool_use_id = 'd', content = '42', is_error = false } } } },
        delegations = { { tool_use_id = 'd', source = 'planner', tier = 'fast', worker_tier = 'fast',
          model = vim.NIL, status = 'completed', error = vim.NIL, detail = vim.NIL,
          started_at = '2026-02-28T23:59:59.400000Z', ended_at = '2026-03-01T00:00:01.800000Z' } },
      })
      H.eq('  ✓ worker fast · not started · completed · 0 turns · $0.00 · 2.4s — count', ended.d[1])
      H.eq(nil, workers.recorded_seconds({ started_at = '2026-02-28T23:59:59Z', ended_at = vim.NIL }),
        'no end recorded (its daemon died): no time')
      H.eq(nil, workers.recorded_seconds({ worker_session_id = '', started_at = '2026-02-28T23:59:59Z',
        ended_at = '2026-02-28T23:59:59Z' }), 'no worker started (denied, stopped while it waited): no run time')
      local running = { tier = 'fast', model = 'anthropic:claude-haiku-4-5', status = 'running', turns = 1,
        cost_usd = '0', elapsed_seconds = 1.0, task = 't', received_at = vim.loop.now() - 5000 }
      H.check(workers.describe(root, { live = running }):find(' · 6.0s — t', 1, true),
        ':Switchman workers shows how long it has run by now, not at its last update (1.0s)',
        workers.describe(root, { live = running }))
      H.check(workers.describe(root, { live = vim.tbl_extend('force', running, { status = 'completed' }) })
        :find(' · 1.0s — t', 1, true), 'an ended one keeps its time')
      H.eq('deep', workers.tier({ tier = 'deep' }), 'not routed yet: the tier asked for')
      H.eq('fast', workers.tier({ tier = 'fast', worker_tier = 'fast', floor_applied = false }))
    end,
  },
  {
    "pure: a rebuilt chat and a transcript show the questions a planner's worker asked, under its line",
    function()
      local render = require('switchman.render')
      local asked = {
        { id = 'a1', title = 'Edit `src/app.py`', command = vim.NIL, outcome = 'allowed_once', reason = vim.NIL },
        { id = 'a2', title = 'Run `make test`', command = 'make test', outcome = 'denied', reason = 'not now' },
        { id = 'a3', title = 'Run `rm x`', command = 'rm x', outcome = 'stopped', reason = vim.NIL },
      }
      local detail = {
        session = { id = 's' },
        turns = { { id = 't1', index = 1, model = 'anthropic:claude-sonnet-4-5', status = 'completed', cost_usd = '0' } },
        messages = {
          { role = 'user', turn_id = 't1', created_at = '2026-03-01T00:00:00Z', content = { { type = 'text', text = 'fix it' } } },
          { role = 'assistant', turn_id = 't1', created_at = '2026-03-01T00:00:01Z', content = {
            { type = 'tool_use', id = 'd', name = 'delegate', input = { tier = 'fast', task = 'fix app' } } } },
          { role = 'user', turn_id = 't1', created_at = '2026-03-01T00:00:02Z', content = {
            { type = 'tool_result', tool_use_id = 'd', content = 'done', is_error = false } } },
        },
        delegations = { { tool_use_id = 'd', source = 'planner', tier = 'fast', worker_tier = 'fast', model = vim.NIL,
          status = 'completed', error = vim.NIL, detail = vim.NIL, approvals = asked } },
      }
      local want = {
        '    ? Edit `src/app.py` — Allowed once. (asked by the worker)',
        '    ? Run `make test` — Denied: not now (asked by the worker)',
        '    ? Run `rm x` — Not answered: the worker was stopped; nothing happened. (asked by the worker)',
      }
      for name, lines in pairs({ history = render.history(root, detail, {}), transcript = render.transcript(root, detail) }) do
        local texts = vim.tbl_map(function(l) return l[1] end, lines)
        local at
        for i, text in ipairs(texts) do
          if text:find('worker fast', 1, true) then
            at = i
          end
        end
        H.check(at, name .. ': the worker line', texts)
        H.eq(want, vim.list_slice(texts, at + 1, at + 3), name .. ': its questions follow it')
      end
      -- the user's own /delegate: its questions follow its line too
      detail.messages = { { role = 'user', turn_id = vim.NIL, created_at = '2026-03-01T00:00:00Z',
        content = { { type = 'text', text = '/delegate fast fix app' } } } }
      detail.delegations[1].source = 'user'
      detail.delegations[1].started_at = '2026-03-01T00:00:00.5Z'
      local texts = vim.tbl_map(function(l) return l[1] end, render.history(root, detail, {}))
      H.eq(want, vim.list_slice(texts, #texts - 2, #texts), 'after the /delegate line')
    end,
  },
  {
    "a worker's transcript opened while it runs is drawn again when it ends (it showed it running for good)",
    function()
      running_worker('Name the module of src/app.py', 'Naming')
      local seen = pick_worker('Name the module', 'Open transcript')
      local bufnr = H.wait_for('the worker transcript', function()
        local b = vim.api.nvim_get_current_buf()
        return vim.api.nvim_buf_get_name(b):find('switchman://session/', 1, true) and b
      end, nil, seen)
      H.wait_text(bufnr, '## Turn 1 · haiku · $0.000000 · running')
      local win = vim.api.nvim_get_current_win()
      vim.cmd('tabprevious') -- the transcript stays open in its tab while you are elsewhere
      H.fake('POST', '/_fake/release')
      wait_idle()
      H.wait_text(bufnr, ' · completed')
      H.check(not H.text(bufnr):find('· running', 1, true), 'no longer running', H.lines(bufnr))
      H.check(vim.api.nvim_get_current_win() ~= win, 'drawn where it is: nothing was focused')
      vim.api.nvim_set_current_win(win)
      vim.cmd('tabclose')
    end,
  },
  {
    'a worker whose daemon was killed shows as interrupted in the stored transcript, not as stopped',
    function()
      local planner = running_worker('Summarise src/app.py', 'Reading')
      -- its last update came 5 s before the daemon died (the worker waited for its model)
      local before
      for _, known in pairs(chat.workers) do
        if known.update.task == 'Summarise src/app.py' then
          known.update.received_at = known.update.received_at - 5000
          before = tonumber(known.update.elapsed_seconds) or 0
        end
      end
      vim.loop.kill(H.child_pids('switchman serve')[1], 'sigkill')
      H.wait_for('the daemon to be gone', function()
        return require('switchman.client').get(root) == nil
      end)
      -- the live line no longer says the worker runs (nor does :Switchman workers, offering Stop)
      H.wait_text(transcript(), '✗ worker fast · haiku · failed · 1 turn · $')
      local live = vim.tbl_filter(function(l)
        return l:find('Summarise src/app.py', 1, true) and l:find(' worker ', 1, true)
      end, H.lines(transcript()))
      H.check(#live == 1 and live[1]:find('— interrupted$'), 'one line, interrupted', H.lines(transcript()))
      -- it ran until the daemon died, not for the time its last update gave (that clock stopped)
      local shown = tonumber(live[1]:match(' · ([%d.]+)s — Summarise'))
      H.check(shown and shown >= before + 4.95, 'the time it ran until the daemon died', { before = before, line = live[1] })
      local statuses = vim.tbl_map(function(update)
        return update.task .. ': ' .. update.status
      end, vim.tbl_values(workers.live(chat)))
      H.check(vim.tbl_contains(statuses, 'Summarise src/app.py: failed'), 'not running, so no Stop is offered', statuses)
      H.fake('POST', '/_fake/release')
      vim.cmd('Switchman restart')
      local line, bufnr = stored_worker_line(planner, 'Summarise src/app.py')
      -- (the model's short name needs the new daemon's model list, which may not be there yet)
      H.check(line and line:find('^  ✗ worker fast · %S+ · failed') and line:find('— interrupted$'),
        'the worker line says the delegation was interrupted', H.lines(bufnr))
      vim.cmd('tabclose')
      -- the call the daemon's death cut off is charged (an estimate) by the next daemon: the list
      -- shows that, not the $0.00 the live line had when the daemon died
      local stored_cost = line:match(' · 1 turn · (.-) — Summarise')
      local summarised = vim.tbl_filter(function(label)
        return label:find('Summarise', 1, true) ~= nil
      end, listed_by('Switchman workers', 'the workers list with the live lines'))[1] or ''
      -- (the list gives it the decimals of its other rows' costs: the same amount, maybe with more digits)
      local listed_cost = summarised:match(' · 1 turn · (~%$[%d.]+ %(estimated%)) · ')
      local places = #((stored_cost or ''):match('%.(%d+)') or '')
      local function rounded(text)
        return ('%.' .. places .. 'f'):format(tonumber((text or ''):match('%$([%d.]+)')) or -1)
      end
      H.check(stored_cost and stored_cost:find('^~%$0%.0*[1-9]') and stored_cost:find('(estimated)', 1, true)
        and listed_cost and rounded(listed_cost) == rounded(stored_cost),
        'the cost recorded since, an estimate', { stored = line, listed = summarised })
      -- a Neovim that did not see them run (its chat has no live lines) lists how each ended
      chat.workers = nil
      local seen = listed_by('Switchman workers', 'the workers list')
      local function listed(task)
        return vim.tbl_filter(function(label)
          return label:find(task, 1, true) ~= nil
        end, seen)[1] or ''
      end
      H.check(listed('List the functions'):find('^✓ worker fast · %S+ · completed · 1 turn'), 'completed', seen)
      H.check(listed('Count the lines'):find('^■ worker balanced %(capped from deep%) · %S+ · cancelled'), 'stopped',
        seen)
      H.check(listed('Summarise'):find('^✗ worker fast · %S+ · failed') and listed('Summarise'):find('— interrupted$'),
        'interrupted', seen)
    end,
  },
  {
    'a worker running when :Switchman restart stops its daemon shows as stopped by it, as the daemon records it',
    function()
      H.fake('POST', '/_fake/reset') -- the killed worker's planner never asked for its last reply
      stalls = 0
      local planner = running_worker('Tidy src/app.py', 'Tidying')
      vim.cmd('Switchman restart') -- the daemon is told to exit: it ends the worker, and says how
      local exited = '— stopped: Switchman stopped while this worker ran (the editor closed, reloaded or '
        .. 'restarted it)'
      H.wait_text(transcript(), '■ worker fast · haiku · cancelled · 1 turn · ')
      local live = vim.tbl_filter(function(l)
        return l:find('Tidy src/app.py', 1, true) and l:find(' worker ', 1, true)
      end, H.lines(transcript()))
      H.check(#live == 1 and vim.endswith(live[1], exited), 'one line, ended by the restart', H.lines(transcript()))
      H.fake('POST', '/_fake/release')
      local stored, bufnr = stored_worker_line(planner, 'Tidy src/app.py')
      H.check(stored and stored:find('^  ■ worker fast · %S+ · cancelled') and vim.endswith(stored, exited),
        'the stored transcript says the same', H.lines(bufnr))
      vim.cmd('tabclose')
    end,
  },
  {
    'a delegation waiting for a worker slot shows as queued with why, and :Switchman workers stops it',
    function()
      local routing = vim.env.SWITCHMAN_CONFIG_DIR .. '/routing.yaml'
      vim.fn.writefile({ 'global_default: sonnet', 'delegation: {max_concurrent_workers: 1}' }, routing)
      H.fake('POST', '/_fake/reset') -- the killed worker's planner never asked for its last reply
      stalls = 0
      vim.cmd('Switchman chat')
      local call = function(id, task)
        return { id = id, name = 'delegate',
          input = { tier = 'fast', task = task, context = { mode = 'minimal' }, allowed_tools = { 'read_file' } } }
      end
      H.script({
        { kind = 'tool_calls', tool_calls = { call('toolu_first', 'Outline src/app.py'), call('toolu_second', 'Lint src/app.py') } },
        { kind = 'text', chunks = { 'Outlining', ' done' }, fault = { kind = 'stall', after_chunks = 1 } },
        { kind = 'text', chunks = { 'One ran, one was stopped before it started.' } },
      })
      send('outline and lint src/app.py, via workers')
      H.wait_text(transcript(), '⟳ worker fast · haiku · running')
      H.wait_text(transcript(), '… worker fast · waiting for a worker slot · queued · 0 turns · $0.00')
      H.wait_text(transcript(), 'Lint src/app.py — waiting for a free worker: 1 of 1 running')
      wait_stall()
      -- in the order of the calls, though the second was announced (queued) before the first started
      local order = {}
      for _, line in ipairs(worker_lines()) do
        table.insert(order, line:match('— (%a+) src/app.py') or line:match('— (%a+) '))
      end
      H.eq({ 'Outline', 'Lint' }, vim.list_slice(order, #order - 1), 'the lines in the order of the calls',
        H.lines(transcript()))
      local seen = pick_worker('queued', 'Stop this worker')
      H.wait_text(transcript(), '■ worker fast · not started · cancelled · 0 turns · $0.00')
      H.fake('POST', '/_fake/release')
      H.wait_text(transcript(), 'One ran, one was stopped before it started.')
      wait_idle()
      H.check(H.text(transcript()):find('✓ worker fast · haiku · completed', 1, true), 'the first worker ran',
        { lines = H.lines(transcript()), seen = seen })
      -- the one stopped before it started has no worker session, so no transcript to open: the
      -- list says so rather than offering one that fails ("No session 'toolu_second'")
      H.notifications = {}
      seen = pick_worker('Lint', 'Open transcript')
      H.wait_notification(vim.log.levels.INFO, 'never started a worker', 'no transcript')
      H.check(not vim.tbl_contains(seen, 'Open transcript'), 'no transcript offered for a worker that never ran',
        { seen = seen, notifications = H.notifications })
      H.check(vim.tbl_isempty(vim.tbl_filter(function(n)
        return n.message:find('No session', 1, true) ~= nil
      end, H.notifications)), 'no failed request for a session that does not exist', H.notifications)
      vim.fn.delete(routing)
    end,
  },
}
