-- :Switchman model / why / rules / sessions / new, and what statusline() shows.
local H = require('harness')
local switchman = require('switchman')
local workspace = require('switchman.workspace')

local root = workspace.normalize(vim.env.SWITCHMAN_TEST_WORKSPACE)

local function wait_statusline(expected)
  return H.wait_for(('statusline() == %q'):format(expected), function()
    return switchman.statusline() == expected
  end, nil, function()
    return switchman.statusline()
  end)
end

local function chat()
  return require('switchman.chat').get(root)
end

local function wait_idle()
  H.wait_for('the turn to end', function()
    return chat().turn == nil
  end)
end

local function last_notification()
  return (H.notifications[#H.notifications] or {}).message
end

--- Wait for the last notification to be an error naming `needle`.
local function wait_error(needle)
  H.wait_for('an error notification', function()
    local n = H.notifications[#H.notifications]
    return n and n.level == vim.log.levels.ERROR and n.message:find(needle, 1, true)
  end, nil, function()
    return H.notifications
  end)
end

return {
  {
    'statusline() is empty until the daemon runs for the workspace',
    function()
      H.eq('', switchman.statusline())
    end,
  },
  {
    ':Switchman model <alias> sets the sticky model and the statusline shows it',
    function()
      vim.cmd('Switchman model sonnet')
      wait_statusline('Switchman: sonnet [sticky]')
      H.check(last_notification():find('Sticky model set: anthropic:claude-sonnet-4-6', 1, true), 'the daemon says so',
        H.notifications)
      H.check(last_notification():find('until you run :Switchman model - (or choose "Follow the rules" in '
        .. ':Switchman model).', 1, true), 'how to undo it, in Neovim\'s terms (not /model)', H.notifications)
    end,
  },
  {
    ':Switchman model (no argument) picks from the models with their state',
    function()
      local labels = H.stub_select(function(item)
        return item.id == 'anthropic:claude-opus-4-7'
      end)
      vim.cmd('Switchman model')
      wait_statusline('Switchman: opus [sticky]')
      H.check(labels[1]:find('Follow the rules', 1, true), 'first: follow the rules again', labels)
      H.check(labels[3]:find('● sonnet', 1, true) and labels[3]:find('ready', 1, true),
        'the sticky model is marked; configured and healthy reads "ready"', labels)
    end,
  },
  {
    'an unknown model is refused with the daemon\'s message',
    function()
      vim.cmd('Switchman model opsu')
      wait_error('opsu')
      -- said as the plugin says everything, so it is clear who says it (it was "Unknown model 'opsu'. …")
      H.check(last_notification():find("^Switchman: Unknown model 'opsu'"), 'named Switchman', H.notifications)
      wait_statusline('Switchman: opus [sticky]')
      -- a word after the model is not dropped: it was set to haiku, the rest ignored
      H.notifications = {}
      vim.cmd('Switchman model haiku extra')
      wait_error("'haiku extra'")
      wait_statusline('Switchman: opus [sticky]')
    end,
  },
  {
    ':Switchman model - clears it; the statusline follows the rules again',
    function()
      vim.cmd('Switchman model -')
      wait_statusline('Switchman: rules')
    end,
  },
  {
    'after a turn the statusline shows the model that took it',
    function()
      require('switchman.chat').open(root, 'write a commit message for the login fix')
      wait_idle()
      wait_statusline('Switchman: haiku')
    end,
  },
  {
    'a model chosen during a turn shows as a pending swap, then applies',
    function()
      H.script({ { kind = 'text', chunks = { 'a', 'b' }, fault = { kind = 'stall', after_chunks = 1 } } })
      chat():send('hello there')
      wait_statusline('Switchman: sonnet …')
      vim.cmd('Switchman model opus')
      wait_statusline('Switchman: sonnet → opus …')
      H.fake('POST', '/_fake/release')
      wait_idle()
      wait_statusline('Switchman: opus [sticky]')
      vim.cmd('Switchman model -')
      wait_statusline('Switchman: sonnet')
    end,
  },
  {
    'an outage shows as a banner in the statusline',
    function()
      H.script({ { kind = 'error', status = 401, message = 'invalid x-api-key', error_type = 'authentication_error' } })
      chat():send('hello again')
      wait_idle()
      local line = H.wait_for('a banner', function()
        local s = switchman.statusline()
        return s:find(' ⚠ ', 1, true) and s
      end, nil, function()
        return switchman.status()
      end)
      H.check(line:find('anthropic', 1, true), 'names the provider', line)
    end,
  },
  {
    ':Switchman why shows the routing chain of the last turn in a float, every line of it in view',
    function()
      local columns, lines = vim.o.columns, vim.o.lines
      vim.o.columns, vim.o.lines = 60, 40 -- the chain's lines are longer: they wrap, and the float is as tall as that
      vim.cmd('Switchman why')
      local win = H.wait_for('a floating window', function()
        local w = vim.api.nvim_get_current_win()
        return vim.api.nvim_win_get_config(w).relative ~= '' and w
      end)
      local bufnr = vim.api.nvim_win_get_buf(win)
      local text = H.text(bufnr)
      H.check(text:find('Chain:', 1, true) and text:find('MANUAL_STICKY', 1, true), 'the chain', text)
      vim.cmd('redraw')
      H.eq(vim.api.nvim_buf_line_count(bufnr), vim.fn.line('w$', win), 'the last line is shown whole, not scrolled off')
      H.feed('q')
      H.check(not vim.api.nvim_win_is_valid(win), 'q closes it')
      vim.o.columns, vim.o.lines = columns, lines
    end,
  },
  {
    ':Switchman rules shows /rules check and /rules show',
    function()
      vim.cmd('Switchman rules')
      local bufnr = H.wait_for('the rules buffer', function()
        local b = require('switchman.ui').find_buffer('switchman://rules/' .. vim.fn.fnamemodify(root, ':t'))
        return b and vim.api.nvim_buf_line_count(b) > 3 and b
      end)
      local text = H.text(bufnr)
      H.check(text:find('## /rules check\nok', 1, true), 'the check passed', text)
      H.check(text:find('## /rules show', 1, true) and text:find('fast for commits', 1, true), 'the rules', text)
      vim.cmd('close')
    end,
  },
  {
    ':Switchman sessions lists sessions and opens a transcript with per-turn model and cost',
    function()
      local labels = H.stub_select(function()
        return true
      end)
      vim.cmd('Switchman sessions')
      local bufnr = H.wait_for('the transcript', function()
        local b = vim.api.nvim_get_current_buf()
        return vim.api.nvim_buf_get_name(b):find('switchman://session/', 1, true) and b
      end, nil, function()
        return labels
      end)
      H.check(labels[1]:find('● ', 1, true) and labels[1]:find('write a commit message', 1, true), 'the session', labels)
      local text = H.text(bufnr)
      H.check(text:find('## Turn 1 · haiku · $', 1, true), 'turn 1 with its model and cost', text)
      H.check(text:find('Why: rule: fast for commits', 1, true), 'and why', text)
      H.check(text:find('Cost by model:', 1, true), 'cost by model', text)
      H.check(text:find('✗ anthropic:claude-sonnet-4-6: ', 1, true), 'the failed turn', text)
      H.eq(false, vim.bo[bufnr].modifiable, 'read-only')
      vim.cmd('tabclose')
    end,
  },
  {
    ':Switchman new starts a new session and clears the chat',
    function()
      vim.cmd('Switchman new')
      H.wait_text(chat().view.transcript, 'New session ')
      H.eq(1, #H.lines(chat().view.transcript), 'only the new-session line')
      local labels = H.stub_select(function()
        return false
      end)
      vim.cmd('Switchman sessions')
      H.wait_for('two sessions', function()
        return #labels == 2
      end, nil, function()
        return labels
      end)
    end,
  },
  {
    ':Switchman resume continues an older session in the chat: its conversation shows and the next message goes there',
    function()
      local left = chat().session_id
      local labels = H.stub_select(function(item)
        local title = item.session.title
        return type(title) == 'string' and title:find('write a commit message', 1, true) ~= nil
      end)
      vim.cmd('Switchman resume')
      H.wait_text(chat().view.transcript, 'write a commit message for the login fix')
      H.eq(2, #labels, 'both sessions offered')
      local older = chat().session_id
      H.check(older ~= left, 'the chat shows the older session', { older, left })
      H.wait_for('the daemon to say it is current', function()
        return require('switchman.status').get(root).session_id == older
      end, nil, function()
        return require('switchman.status').get(root)
      end)
      H.script({ { kind = 'text', chunks = { 'continued' } } })
      chat():send('@mini and one more thing') -- (anthropic is out since the outage above)
      wait_idle()
      H.wait_text(chat().view.transcript, 'continued')
      H.eq(older, chat().session_id, 'the message went to the older session')
      local ids = vim.fn.getcompletion('Switchman resume ', 'cmdline')
      H.check(vim.tbl_contains(ids, older) and vim.tbl_contains(ids, left),
        'the first <Tab> completes the session ids (it completed nothing)', ids)
      H.eq({ older }, vim.fn.getcompletion('Switchman resume ' .. older:sub(1, 12), 'cmdline'), 'by what is typed')
      H.notifications = {}
      vim.cmd('Switchman resume nope')
      wait_error("Switchman: No session 'nope'")
      H.eq(older, chat().session_id, 'a refusal changes nothing')
      -- from a transcript: that session, without a picker
      local shown = H.stub_select(function(item)
        return item.session.id == left
      end)
      vim.cmd('Switchman sessions')
      H.wait_for('the transcript of the session left', function()
        return vim.api.nvim_buf_get_name(0) == 'switchman://session/' .. left
      end, nil, function()
        return shown
      end)
      H.stub_select(function()
        error('no picker from a transcript')
      end)
      vim.cmd('Switchman resume')
      H.wait_for('the chat to show it', function()
        return chat().session_id == left
      end)
      vim.cmd('tabclose')
      -- while the chat's turn runs it is refused at once: the picker asked which session, then refused
      H.script({ { kind = 'text', chunks = { 'busy answering', 'never' }, fault = { kind = 'stall', after_chunks = 1 } } })
      chat():send('@mini a turn that is still running')
      H.wait_text(chat().view.transcript, 'busy answering')
      local offered = H.stub_select(function()
        return false
      end)
      H.notifications = {}
      vim.cmd('Switchman resume')
      H.check((last_notification() or ''):find('a turn is still running', 1, true), 'refused', H.notifications)
      H.eq({}, offered, 'no session was offered')
      H.fake('POST', '/_fake/release')
      wait_idle()
    end,
  },
  {
    'an argument a subcommand does not take is refused, not dropped; a mistyped subcommand is named',
    function()
      local session = chat().session_id
      local shown = H.stub_select(function()
        return false
      end)
      local refused = {
        { 'Switchman new now', ':Switchman new: "now" is not an argument it takes; nothing was done. It takes no arguments.' },
        { 'Switchman workers stop', ':Switchman workers: "stop" is not an argument it takes' },
        { 'Switchman trust revoke edit_file', ':Switchman trust: "revoke edit_file" is not an argument it takes' },
        { 'Switchman why the model', ':Switchman why: "the model" is not' },
        { 'Switchman sessions worker', ':Switchman sessions: "worker" is not an option; nothing was done. Usage: :Switchman sessions [workers].' },
        { 'Switchman feedback up twice', 'Usage: :Switchman feedback {up|down|none}.' },
        { 'Switchman rules check show', 'Usage: :Switchman rules [check|show|reload].' },
        { 'Switchman rules all', 'unknown rules action "all"' },
        { 'Switchman Chat', 'unknown subcommand "Chat". Did you mean :Switchman chat?' },
        { 'Switchman sesions', 'Did you mean :Switchman sessions?' },
        { 'Switchman wor', 'Did you mean :Switchman workers?' },
      }
      for _, case in ipairs(refused) do
        H.notifications = {}
        vim.cmd(case[1])
        wait_error(case[2])
      end
      vim.cmd('Switchman xyzzy')
      wait_error('unknown subcommand "xyzzy".\nUsage')
      H.eq(session, chat().session_id, 'no new session was started')
      H.eq({}, shown, 'no picker was shown')
    end,
  },
}
