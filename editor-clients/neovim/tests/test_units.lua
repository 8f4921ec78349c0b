-- The pure parts, without a daemon: statusline text, rendering, session nesting, paths.
local H = require('harness')
local config = require('switchman.config')
local render = require('switchman.render')
local sessions = require('switchman.sessions')
local status = require('switchman.status')
local workspace = require('switchman.workspace')

local ROOT = '/nowhere'

--- The texts of rendered lines.
local function texts(lines)
  return vim.tbl_map(function(l)
    return l[1]
  end, lines)
end

--- The `count` lines after the line `first` of `lines` (all of them when there is none).
local function after(lines, first, count)
  for i, line in ipairs(lines) do
    if line == first then
      return vim.list_slice(lines, i + 1, i + count)
    end
  end
  return lines
end
local HAIKU, SONNET, OPUS = 'anthropic:claude-haiku-4-5', 'anthropic:claude-sonnet-4-6', 'anthropic:claude-opus-4-7'

local function record(fields)
  return vim.tbl_extend('force', { active_model = nil, sticky_model = nil, pending_swap = nil, turn_in_flight = false,
    banners = {}, config_errors = 0 }, fields)
end

local function session(id, workers)
  return { id = id, title = 'task ' .. id, updated_at = '2026-05-08T14:23:19.004Z', turn_count = 1, cost_usd = '0.01',
    last_model = HAIKU, workers = workers or {} }
end

return {
  {
    'setup() names an option it does not know (a typo was ignored without a word), and the one meant',
    function()
      local saved = vim.deepcopy(config.options)
      H.notifications = {}
      config.apply({ keymap = true, python = nil, chat = { positon = 'left', keymaps = { sned = false, close = false } },
        statusline = { prefix = '', prefx = '' }, float = { border = 'single' }, keymaps = { chat = '<leader>c', chta = '<leader>x' } })
      H.eq({
        'Switchman: setup() has no option chat.keymaps.sned (did you mean chat.keymaps.send?); it is ignored (:help switchman-setup).',
        'Switchman: setup() has no option chat.positon (did you mean chat.position?); it is ignored (:help switchman-setup).',
        'Switchman: setup() has no option keymap (did you mean keymaps?); it is ignored (:help switchman-setup).',
        'Switchman: setup() has no option keymaps.chta (did you mean keymaps.chat?); it is ignored (:help switchman-setup).',
        'Switchman: setup() has no option statusline.prefx (did you mean statusline.prefix?); it is ignored (:help switchman-setup).',
      }, vim.tbl_map(function(n)
        return n.message
      end, H.notifications))
      H.notifications = {}
      config.apply({ chat = { position = 'middle' } })
      H.eq({ "Switchman: setup()'s chat.position \"middle\" is not one of right, left, below, above, tab; the chat opens"
        .. ' on the right.' }, vim.tbl_map(function(n)
        return n.message
      end, H.notifications), 'a value it cannot use')
      H.notifications = {}
      config.apply({ cmd = { 'switchman', 'serve' }, python = '/usr/bin/python3', on_attach = function() end, keymaps = true,
        chat = { position = 'tab', keymaps = { send = { n = '<CR>' } } } })
      H.eq({}, H.notifications, 'nothing to say of known options')
      config.options = saved
    end,
  },
  {
    'setup() refuses an empty cmd, a chat key given as a string and a chat size it cannot use, saying what it takes (they raised Lua errors later)',
    function()
      -- `cmd = {}` made :Switchman chat and :checkhealth raise E1174; `thumbs_up = 'g+'` made :Switchman chat
      -- raise "bad argument #1 to 'pairs'"
      local saved = vim.deepcopy(config.options)
      local function refused(opts)
        local ok, err = pcall(config.apply, opts)
        H.check(not ok, 'refused', opts)
        return tostring(err)
      end
      H.check(refused({ cmd = {} }):find('cmd: expected a list such as { "switchman", "serve" }', 1, true),
        'an empty cmd', refused({ cmd = {} }))
      H.check(refused({ cmd = { 42 } }):find('cmd: expected a list such as', 1, true), 'no command name')
      -- `capabilities = 'x'` made :Switchman chat raise "attempt to index local 'caps'"; `keymaps = 'yes'`
      -- mapped nothing without a word
      H.check(refused({ capabilities = 'x' }):find('capabilities: expected table', 1, true), 'capabilities')
      H.check(refused({ keymaps = 'yes' }):find('keymaps: expected ', 1, true), 'global keymaps')
      local err = refused({ chat = { keymaps = { thumbs_up = 'g+' } } })
      H.check(err:find('chat.keymaps.thumbs_up: expected false or keys by mode, such as { n = "g+" }', 1, true),
        'a key without its mode', err)
      H.check(refused({ chat = { keymaps = { send = { n = 5 } } } }):find('chat.keymaps.send: expected', 1, true),
        'a key that is no string')
      -- `size = 'wide'` and `size = 2.5` made :Switchman chat raise ("attempt to compare string with
      -- number", "Number is not integral"); 0 or less opened a chat one column wide
      for _, bad in ipairs({ 'wide', 2.5, 0, -3 }) do
        H.check(refused({ chat = { size = bad } }):find('chat.size: expected a fraction of the editor', 1, true),
          'chat.size ' .. tostring(bad))
      end
      for _, bad in ipairs({ 'x', 0, 2.5 }) do
        H.check(refused({ chat = { input_height = bad } }):find('chat.input_height: expected a number of lines', 1, true),
          'chat.input_height ' .. tostring(bad))
      end
      H.eq(saved, config.options, 'the options in force are kept')
      config.apply({ chat = { keymaps = { thumbs_up = false, send = { n = { '<CR>' }, i = '<C-s>' } } } })
      for _, good in ipairs({ 0.4, 1, 80 }) do
        config.apply({ chat = { size = good, input_height = 6 } })
      end
      config.options = saved
    end,
  },
  {
    'a huge buffer is attached cut one character past what the daemon keeps, never mid-character',
    function()
      local attach = require('switchman.attach')
      local line = ('é'):rep(999)
      local lines = {}
      for i = 1, 40000 do -- 40 million characters
        lines[i] = line
      end
      local text = attach.text_of(lines)
      H.eq(attach.max_chars + 1, vim.fn.strchars(text), 'one past the limit')
      H.eq(line .. '\n' .. line, attach.text_of({ line, line }), 'a small one whole')
      H.check(vim.fn.strcharpart(text, attach.max_chars, 1) == 'é', 'whole characters', text:sub(-4))
      H.eq('a\0b', attach.text_of({ 'a\0b' }), 'a NUL byte (a binary file) is text like any other')
    end,
  },
  {
    ':Switchman add completes file names (it raised "E474: Invalid argument")',
    function()
      local folder = vim.fn.tempname()
      vim.fn.mkdir(folder .. '/src', 'p')
      vim.fn.writefile({}, folder .. '/src/app.py')
      local cwd = vim.fn.getcwd()
      vim.cmd('cd ' .. vim.fn.fnameescape(folder))
      local ok, found = pcall(vim.fn.getcompletion, 'Switchman add sr', 'cmdline')
      local inside = ok and vim.fn.getcompletion('Switchman add src/a', 'cmdline')
      vim.cmd('cd ' .. vim.fn.fnameescape(cwd))
      H.check(ok, 'no error', found)
      H.eq({ 'src/' }, found, 'the folder')
      H.eq({ 'src/app.py' }, inside, 'a file in it')
    end,
  },
  {
    "the profile picker shows a long description on one line, cut with …, to the editor's width",
    function()
      local profiles = require('switchman.profiles')
      local columns = vim.o.columns
      local function entry(description)
        return profiles.describe({ name = 'reviewer', source = 'user', description = description,
          model_policy = { model = 'haiku' }, approval = 'read_only' }, 'reviewer')
      end
      local long = ('word '):rep(40) .. '\nsecond line'
      vim.o.columns = 200
      H.eq('● reviewer     [user]  ' .. ('word '):rep(11) .. 'word… · model: haiku · read-only', entry(long),
        'at most 60 characters')
      H.eq('● reviewer     [user]  Reviews code · model: haiku · read-only', entry('Reviews code'), 'a short one whole')
      H.eq('● reviewer     [user]  model: haiku · read-only', entry(vim.NIL), 'none')
      vim.o.columns = 80
      local narrow = entry(long)
      H.check(vim.fn.strdisplaywidth(narrow) <= 80 - 5 and narrow:find('word… · model', 1, true), 'fits a narrow editor',
        narrow)
      vim.o.columns = 30
      H.check(entry(long):find(' ' .. ('word '):rep(3) .. 'word… · ', 1, true), 'never shorter than 20', entry(long))
      vim.o.columns = columns
    end,
  },
  {
    "a bounded workspace default's picker entry fits the editor's width too: its tools cut with … (status lists them all)",
    function()
      local profiles = require('switchman.profiles')
      local columns = vim.o.columns
      local bounded = { name = 'default', source = 'builtin', bounded_by = 'reviewer', model_policy = {},
        description = 'The general coding assistant.',
        tools = { 'delegate', 'edit_file', 'grep', 'list_files', 'read_file' } }
      vim.o.columns = 200
      H.eq("● default      [builtin]  The general coding assistant. · model: your rules · "
        .. "bounded by your default 'reviewer' (tools: delegate, edit_file, grep, list_files, read_file)",
        profiles.describe(bounded, 'default'), 'whole where it fits')
      vim.o.columns = 160
      local entry = profiles.describe(bounded, 'default')
      H.check(vim.fn.strdisplaywidth(entry) <= 160 - 5, 'one line of 160 columns', entry)
      H.check(entry:find("· bounded by your default 'reviewer' (tools: delegate, ", 1, true)
        and entry:sub(-#'…)') == '…)', 'the bound said, its tools cut', entry)
      vim.o.columns = 120
      H.check(profiles.describe(bounded, 'default'):find("(tools: delegate, edit_f…)", 1, true),
        'narrower, never cut shorter than that', profiles.describe(bounded, 'default'))
      vim.o.columns = columns
    end,
  },
  {
    "a command's output reads as a terminal showed it: no escape sequences, a carriage return's last value",
    function()
      local shown = vim.tbl_map(function(line)
        return line[1]
      end, render.tool_output('Exit status 1.\n\27[1;31mFAILED\27[0m test_login\n\27]0;title\7 10%\r100%\r\nbell\7 tab\there\n'))
      H.eq({ '    │ Exit status 1.', '    │ FAILED test_login', '    │ 100%', '    │ bell tab\there' }, shown)
    end,
  },
  {
    'the code block under the cursor, for the yank mapping',
    function()
      local lines = { 'Try this:', '```python', 'def f():', '    return 2', '```', 'or', '```', 'x', '```' }
      H.eq({ lines = { 'def f():', '    return 2' }, text = 'def f():\n    return 2', lang = 'python' },
        render.code_block_at(lines, 3))
      H.eq('python', render.code_block_at(lines, 2).lang, 'on the opening fence')
      H.eq({ 'x' }, render.code_block_at(lines, 8).lines, 'a block without a language')
      H.eq(nil, render.code_block_at(lines, 6), 'between blocks')
      H.eq(nil, render.code_block_at(lines, 1), 'before any block')
    end,
  },
  {
    'statusline text for each state of the status notification',
    function()
      H.eq('Switchman: rules', status.format(ROOT, record({})))
      H.eq('Switchman: claude-haiku-4-5', status.format(ROOT, record({ active_model = HAIKU })), 'no aliases cached')
      H.eq('Switchman: claude-sonnet-4-6 [sticky]', status.format(ROOT, record({ active_model = HAIKU,
        sticky_model = SONNET })), 'the sticky model wins over the last one')
      H.eq('Switchman: claude-haiku-4-5 → claude-opus-4-7 …', status.format(ROOT, record({ active_model = HAIKU,
        pending_swap = { model = OPUS }, turn_in_flight = true })))
      H.eq('Switchman: claude-sonnet-4-6 [sticky] → rules', status.format(ROOT, record({ sticky_model = SONNET,
        pending_swap = { model = vim.NIL } })), 'a pending clear')
      H.eq('Switchman: rules ✗ config', status.format(ROOT, record({ config_errors = 2 })))
      H.eq('Switchman: claude-haiku-4-5 ⚠ anthropic:claude-opus-4-7 currently una… (+1)', status.format(ROOT,
        record({ active_model = HAIKU, banners = { 'anthropic:claude-opus-4-7 currently unavailable.', 'b' } })))
      -- a file's folders would fill the 40 characters: its name says which file (`:Switchman status` names it whole)
      H.eq('Switchman: rules ✗ config ⚠ routing.yaml has errors; the built-in d…', status.format(ROOT, record({
        config_errors = 1, banners = { '/home/me/.config/switchman/routing.yaml has errors; the built-in defaults are in use.' } })))
      H.eq('Switchman: rules ⚠ ollama: http://127.0.0.1:11434/v1 down', status.format(ROOT, record({
        banners = { 'ollama: http://127.0.0.1:11434/v1 down' } })), 'an address is not a file')
    end,
  },
  {
    "today's spend names the part that is estimated, as /cost does",
    function()
      H.eq('$0.410000', status.cost_today(record({ cost_today_usd = '0.410000' })))
      H.eq('$0.410000', status.cost_today(record({ cost_today_usd = '0.410000', estimated_today_usd = '0.000000' })))
      H.eq('$0.410000 (of which ~$0.020000 estimated: calls cut short)',
        status.cost_today(record({ cost_today_usd = '0.410000', estimated_today_usd = '0.020000' })))
      H.eq('~$0.020000 (estimated: calls cut short)',
        status.cost_today(record({ cost_today_usd = '0.020000', estimated_today_usd = '0.020000' })))
      H.eq('$-', status.cost_today(record({})), 'before the first status (as before)')
    end,
  },
  {
    "a float.border Neovim does not know opens the float with the default border and says so (it raised E5108)",
    function()
      local ui = require('switchman.ui')
      config.apply({ float = { border = 'fancy' } })
      H.notifications = {}
      local bufnr, win = ui.float({ 'Why this model?', 'because' }, { title = 'Why' })
      H.eq({ 'Why this model?', 'because' }, H.lines(bufnr), 'the float shows its lines')
      H.eq(win, vim.api.nvim_get_current_win(), 'and has the cursor')
      vim.api.nvim_win_close(win, true)
      H.eq(1, #H.notifications, 'one warning', H.notifications)
      H.check(H.notifications[1].message:find("setup()'s float.border \"fancy\" is no border Neovim knows", 1, true),
        'naming the option', H.notifications)
      config.apply({})
    end,
  },
  {
    "a read-only buffer cannot be undone to empty: g- and :earlier left a transcript or float blank",
    function()
      local ui = require('switchman.ui')
      local scratch = ui.scratch('switchman://test/undo', { '# A transcript', 'its text' })
      vim.cmd('silent! normal! g-')
      vim.cmd('silent! earlier 1f')
      H.eq({ '# A transcript', 'its text' }, H.lines(scratch), 'the scratch buffer keeps its text')
      ui.fill(scratch, { 'filled again' })
      vim.cmd('silent! normal! g-')
      H.eq({ 'filled again' }, H.lines(scratch), 'refilled, it is not undone to the first text')
      vim.cmd('bwipeout! ' .. scratch)
      local float, win = ui.float({ 'Why this model?', 'because' }, { title = 'Why' })
      vim.cmd('silent! normal! g-')
      H.eq({ 'Why this model?', 'because' }, H.lines(float), 'the float keeps its text')
      vim.api.nvim_win_close(win, true)
      local transcript = require('switchman.chat.view').new('/tmp/undo-root').transcript
      ui.put(transcript, 0, -1, { '## You', 'hello' })
      vim.api.nvim_buf_call(transcript, function()
        vim.cmd('silent! normal! g-')
      end)
      H.eq({ '## You', 'hello' }, H.lines(transcript), 'the chat transcript keeps its text')
    end,
  },
  {
    "a window opened from the chat's windows has the user's options, not the chat's (no numbers, no signs)",
    function()
      vim.o.number, vim.o.signcolumn = true, 'yes'
      local view = require('switchman.chat.view').new('/tmp/options-root')
      local input_win = view:show()
      H.eq(false, vim.wo[input_win].number, 'the chat has no numbers')
      H.eq('no', vim.wo[input_win].signcolumn, 'nor signs')
      for _, from in ipairs({ input_win, vim.fn.win_findbuf(view.transcript)[1] }) do
        vim.api.nvim_set_current_win(from)
        vim.cmd('tabnew')
        H.eq({ true, 'yes', true }, { vim.wo.number, vim.wo.signcolumn, vim.wo.foldenable },
          'a file opened from the chat shows numbers, signs and folds')
        vim.cmd('tabclose')
      end
      view:hide()
      vim.o.number, vim.o.signcolumn = false, 'auto'
    end,
  },
  {
    "the chat wraps a line beside a number, not inside it ('breakat' without . and ,), leaving your 'breakat' to your windows",
    function()
      local ui = require('switchman.ui')
      local default = vim.o.breakat -- ' ^I!@*-+;:,./?'
      local chat_value = (default:gsub('[.,]', ''))
      -- Neovim sends no OptionSet during startup, where these tests run: sent here as it sends it after
      local function option_set(name)
        vim.api.nvim_exec_autocmds('OptionSet', { pattern = name, modeline = false })
      end
      H.check(default:find('.', 1, true), "Neovim's default breaks after a .", default)
      vim.cmd('only')
      local code_win = vim.api.nvim_get_current_win()
      vim.wo[code_win].linebreak, vim.wo[code_win].wrap = true, true -- your window wraps at 'breakat'
      local view = require('switchman.chat.view').new('/tmp/breakat-root')
      local input_win = view:show()
      local transcript_win = vim.fn.win_findbuf(view.transcript)[1]
      local width = vim.api.nvim_win_get_width(transcript_win)
      -- a worker line's duration straddling the window's edge: `7.` fits on the first row, `5s` does not
      local line = ('x'):rep(width - 5) .. ' · 7.5s — a task'
      ui.put(view.transcript, 0, -1, { line })
      local seven = line:find('7.5s', 1, true)
      local function rows()
        vim.cmd('redraw')
        local at = vim.fn.screenpos(transcript_win, 1, seven)
        local to = vim.fn.screenpos(transcript_win, 1, seven + 3)
        return { at.row, to.row }
      end
      local shown = rows()
      H.check(shown[1] > 0 and shown[1] == shown[2], '7.5s on one row of the chat', { shown = shown, width = width })
      H.eq(chat_value, vim.o.breakat, 'in the chat: without . and ,')
      vim.api.nvim_set_current_win(code_win)
      H.eq(default, vim.o.breakat, 'in your window that wraps at it: yours')
      vim.cmd('setlocal nolinebreak')
      option_set('linebreak')
      H.eq(chat_value, vim.o.breakat, 'no other window reads it: the chat keeps numbers whole')
      shown = rows()
      H.check(shown[1] == shown[2], '7.5s on one row while the cursor is elsewhere', shown)
      vim.cmd('setlocal linebreak')
      option_set('linebreak')
      H.eq(default, vim.o.breakat, 'a window that reads it again: yours')
      vim.api.nvim_set_current_win(input_win)
      vim.cmd('set breakat+=#') -- added to in the chat: added to yours, which keeps its . and ,
      option_set('breakat')
      H.eq(chat_value .. '#', vim.o.breakat, 'in the chat: the chat\'s value and #')
      vim.api.nvim_set_current_win(code_win)
      H.eq(default .. '#', vim.o.breakat, 'yours with # (it was left without . and , for good)')
      vim.api.nvim_set_current_win(input_win)
      vim.cmd('set breakat-=#')
      option_set('breakat')
      vim.cmd('set breakat^=#')
      option_set('breakat')
      vim.cmd('set breakat-=?')
      option_set('breakat')
      vim.api.nvim_set_current_win(code_win)
      H.eq('#' .. default:gsub('%?', ''), vim.o.breakat, 'taken out, added at the start: yours too')
      vim.api.nvim_set_current_win(input_win)
      vim.cmd([[set breakat=\ -]]) -- set whole in the chat: yours from now on
      option_set('breakat')
      H.eq(' -', vim.o.breakat, 'a value set in the chat is in force')
      vim.api.nvim_set_current_win(code_win)
      H.eq(' -', vim.o.breakat, 'and is yours outside it')
      vim.api.nvim_set_current_win(input_win)
      vim.o.breakat = default -- from Lua (no OptionSet in every Neovim): seen as yours at the next window change
      vim.api.nvim_set_current_win(transcript_win)
      H.eq(chat_value, vim.o.breakat, 'yours again, less . and , in the chat')
      view:hide()
      H.eq(default, vim.o.breakat, 'the chat closed: yours')
      vim.wo[code_win].linebreak = false
    end,
  },
  {
    'statusline pieces come from setup()',
    function()
      config.apply({ statusline = { prefix = '', sticky = '*' } })
      H.eq('claude-sonnet-4-6*', status.format(ROOT, record({ sticky_model = SONNET })))
      -- a piece set to false (as `profile = false` is documented) is left out: `prefix = false` raised
      -- "invalid value (boolean) at index 1 in table for 'concat'" at every redraw of the statusline
      config.apply({ statusline = { prefix = false, sticky = false, busy = false, max_banner = 'x' } })
      H.eq('claude-sonnet-4-6 ⚠ routing.yaml has errors', status.format(ROOT, record({ sticky_model = SONNET,
        turn_in_flight = true, banners = { 'routing.yaml has errors' } })))
      config.apply({})
    end,
  },
  {
    "a tool call is one line: an edit's text with newlines is shown escaped, clipped between characters",
    function()
      H.eq({ '  ⚙ edit_file new_text=a = 1\\r\\nb = 2 old_text=a = 0 path=src/x.py', hl = 'SwitchmanTool' },
        render.tool_call({ name = 'edit_file', input = { path = 'src/x.py', old_text = 'a = 0', new_text = 'a = 1\r\nb = 2' } }))
      local long = render.tool_call({ name = 'grep', input = { pattern = ('x'):rep(70) .. 'éééé' } })[1]
      H.eq('  ⚙ grep pattern=' .. ('x'):rep(70) .. '…', long, 'é is not cut in two')
      local buf = vim.api.nvim_create_buf(false, true)
      require('switchman.ui').put(buf, 0, -1, { render.tool_call({ name = 'edit_file', input = { new_text = 'a\nb' } }) })
      vim.api.nvim_buf_delete(buf, { force = true })
    end,
  },
  {
    'the route badge and the outcome line',
    function()
      H.eq('[claude-haiku-4-5 · rule: fast for commits]', render.badge(ROOT, HAIKU, 'rule: fast for commits'))
      H.eq('[/rules]', render.badge(ROOT, nil, '/rules'))
      local failed = render.outcome(ROOT, { status = 'failed', model = SONNET, cost_usd = '0',
        error = { code = 'provider_error', message = 'anthropic: server error (500)\nsend it again' },
        usage = { input_tokens = 0, output_tokens = 0 } })
      H.eq({ '✗ anthropic: server error (500)', 'send it again', '  claude-sonnet-4-6 · $0 · 0 in / 0 out tokens' },
        vim.tbl_map(function(l)
          return l[1]
        end, failed))
      local stopped = render.outcome(ROOT, { status = 'cancelled', model = SONNET, cost_usd = '0.001902',
        estimated_usd = '0.001902', usage = { input_tokens = 634, output_tokens = 0 } })
      H.eq('  claude-sonnet-4-6 · ~$0.001902 (estimated) · 634 in / 0 out tokens', stopped[#stopped][1],
        'a cost that is all estimated says so once')
      local partly = render.outcome(ROOT, { status = 'cancelled', model = SONNET, cost_usd = '0.003',
        estimated_usd = '0.001902', usage = { input_tokens = 634, output_tokens = 0 } })
      H.eq('  claude-sonnet-4-6 · $0.003000 (~$0.001902 estimated) · 634 in / 0 out tokens', partly[#partly][1],
        'a cost partly estimated names the estimated part, both with the same decimals')
      local reported = render.outcome(ROOT, { status = 'completed', model = SONNET, cost_usd = '0.0036',
        estimated_usd = '0.000000', usage = { input_tokens = 1, output_tokens = 1 } })
      H.eq('  claude-sonnet-4-6 · $0.0036 · 1 in / 1 out tokens', reported[#reported][1])
      local workers = { { cost_usd = '0.0027', estimated_usd = '0' }, { cost_usd = '0.0001', estimated_usd = '0.0001' } }
      local planner = render.outcome(ROOT, { status = 'completed', model = SONNET, cost_usd = '0.0036',
        estimated_usd = '0', usage = { input_tokens = 1, output_tokens = 1 } }, 'T1', workers)
      H.eq('  claude-sonnet-4-6 · $0.0064 incl. workers $0.0028 (~$0.0001 estimated) · 1 in / 1 out tokens',
        planner[#planner][1], "a turn's cost includes its workers', as VS Code's badge (it showed the planner's own)")
      local guessed = render.outcome(ROOT, { status = 'cancelled', model = SONNET, cost_usd = '0.0036',
        estimated_usd = '0.0036', usage = { input_tokens = 1, output_tokens = 0 } }, 'T1',
        { { cost_usd = '0.00004', estimated_usd = '0.00004' } })
      H.eq('  claude-sonnet-4-6 · ~$0.00364 incl. workers $0.00004 (estimated) · 1 in / 0 out tokens',
        guessed[#guessed][1], 'all of it estimated: still marked as an estimate')
      local idle = render.outcome(ROOT, { status = 'completed', model = SONNET, cost_usd = '0.0036',
        usage = { input_tokens = 1, output_tokens = 1 } }, 'T1', { { cost_usd = '0', estimated_usd = '0' } })
      H.eq('  claude-sonnet-4-6 · $0.0036 · 1 in / 1 out tokens', idle[#idle][1], 'workers that cost nothing')
    end,
  },
  {
    "a session drawn as stored gets the chat's display-only lines back, each in its place",
    function()
      local function message(id, turn_id, role, text, at)
        return { id = id, turn_id = turn_id, role = role, created_at = '2026-11-24T12:00:' .. at .. 'Z',
          content = { { type = 'text', text = text } } }
      end
      local function turn(id)
        return { id = id, model = SONNET, summary = 'global default', status = 'completed', cost_usd = '0.01',
          usage = { input_tokens = 1, output_tokens = 1 } }
      end
      local detail = {
        messages = { message('m1', 'T1', 'user', 'first', '01.5'), message('m2', 'T1', 'assistant', 'one', '02'),
          message('m3', nil, 'user', 'failed to start', '03'), message('m4', 'T2', 'user', 'second', '05'),
          message('m5', 'T2', 'assistant', 'two', '06') },
        turns = { turn('T1'), turn('T2') },
      }
      local kept = {
        { turn_id = 'T1', early = true, entries = { { '> retrying' } } },
        { turn_id = 'T2', early = false, entries = { { '> stopped after 25 steps' } } },
        -- a refused command between the two turns, and one before anything was stored
        { at = '2026-11-24T12:00:02.500000', entries = { { '## You' }, { '/modle' }, { '✗ no such command' } } },
        { at = '2026-11-24T12:00:00.000000', entries = { { '## You' }, { '@nope hi' }, { '✗ unknown alias' } } },
        -- an error after a message the daemon stored (its user line is not shown twice), and
        -- after one it did not store (its user line is shown)
        { at = '2026-11-24T12:00:04.000000', entries = { { '✗ could not start' } }, text = 'failed to start',
          user = { { '## You' }, { 'failed to start' } }, sent_at = '2026-11-24T12:00:02.900000' },
        { at = '2026-11-24T12:00:07.000000', entries = { { '✗ lost' } }, text = 'never stored',
          user = { { '## You' }, { 'never stored' } }, sent_at = '2026-11-24T12:00:06.500000' },
      }
      local lines = vim.tbl_map(function(l)
        return l[1]
      end, render.history(ROOT, detail, kept))
      local footer = '  claude-sonnet-4-6 · $0.01 · 1 in / 1 out tokens'
      H.eq({ '## You', '@nope hi', '✗ unknown alias', '',
        '## You', 'first', '', '## Switchman [claude-sonnet-4-6 · global default]', '> retrying', 'one', footer, '',
        '## You', '/modle', '✗ no such command', '',
        '## You', 'failed to start', '', '✗ could not start', '',
        '## You', 'second', '', '## Switchman [claude-sonnet-4-6 · global default]', 'two', '> stopped after 25 steps',
        footer, '', '## You', 'never stored', '✗ lost' }, lines)
      H.eq(render.history(ROOT, detail), render.history(ROOT, detail, {}), 'nothing kept: drawn as stored')
    end,
  },
  {
    'a stored tool error shows why, as the chat did live; a stored output its size',
    function()
      -- A reopened chat said `✗ delegate: 3 lines of output` where the live one had said why it failed.
      local at = '2026-11-24T12:00:01Z'
      local detail = {
        messages = {
          { id = 'm1', turn_id = 'T1', role = 'user', created_at = at, content = { { type = 'text', text = 'go' } } },
          { id = 'm2', turn_id = 'T1', role = 'assistant', created_at = at, content = {
            { type = 'tool_use', id = 'tu1', name = 'delegate', input = { tier = 'fast' } },
            { type = 'tool_use', id = 'tu2', name = 'read_file', input = { path = 'a.py' } } } },
          { id = 'm3', turn_id = 'T1', role = 'user', created_at = at, content = {
            { type = 'tool_result', tool_use_id = 'tu1', is_error = true,
              content = 'cancelled_by_user\nThe user stopped this worker.\nNothing was changed.' },
            { type = 'tool_result', tool_use_id = 'tu2', content = 'line one\nline two' } } },
        },
        turns = { { id = 'T1', model = SONNET, summary = 'global default', status = 'completed' } },
      }
      local lines = vim.tbl_map(function(l)
        return l[1]
      end, render.history(ROOT, detail))
      H.check(vim.tbl_contains(lines, '  ✗ delegate: cancelled_by_user'), table.concat(lines, '\n'))
      H.check(vim.tbl_contains(lines, '  ✓ read_file: 2 lines of output'), table.concat(lines, '\n'))
    end,
  },
  {
    "a stored question shows the diff and the worker's tier and tools it showed; an older record its line alone",
    function()
      -- a chat drawn from the session showed a question's line alone: not the edit's diff, the tier and tools
      -- of a delegation, nor a /delegate's question, all of which the session keeps now
      local at = '2026-11-24T12:00:01Z'
      local diff = { '--- a/a.py', '+++ b/a.py', '@@ -1,20 +1,20 @@' }
      for i = 1, 20 do
        table.insert(diff, ('-x = %d'):format(i))
      end
      table.insert(diff, '[… 7 more lines not kept]')
      local function asked(id, title, extra)
        return vim.tbl_extend('force', { id = id, title = title, outcome = 'allowed_once', reason = vim.NIL,
          command = vim.NIL, cwd = vim.NIL, path = 'a.py' }, extra or {})
      end
      local detail = {
        messages = {
          { id = 'm1', turn_id = 'T1', role = 'user', created_at = at, content = { { type = 'text', text = 'go' } } },
          { id = 'm2', turn_id = 'T1', role = 'assistant', created_at = at, content = {
            { type = 'tool_use', id = 'tu1', name = 'edit_file', input = {} },
            { type = 'tool_use', id = 'tu2', name = 'edit_file', input = {} },
            { type = 'tool_use', id = 'tu3', name = 'delegate', input = { tier = 'fast', task = 't' } } } },
          { id = 'm3', turn_id = 'T1', role = 'tool', created_at = at, content = {
            { type = 'tool_result', tool_use_id = 'tu1', content = 'ok', summary = 'edited a.py',
              approval = asked('q1', 'Edit a.py', { diff = table.concat(diff, '\n') .. '\n' }) },
            { type = 'tool_result', tool_use_id = 'tu2', content = 'ok', summary = 'edited b.py',
              approval = asked('q2', 'Edit b.py') }, -- kept before diffs were
            { type = 'tool_result', tool_use_id = 'tu3', content = 'done', summary = 'worker done',
              approval = asked('q3', 'Delegate to a fast worker that may change files',
                { path = vim.NIL, diff = vim.NIL, tier = 'fast', model = 'anthropic:claude-haiku-4-5', routed_by = vim.NIL,
                  worker_tools = { 'edit_file', 'run_command' } }) } } },
          { id = 'm4', turn_id = vim.NIL, role = 'user', created_at = '2026-11-24T12:00:02Z',
            content = { { type = 'text', text = '/delegate fast fix it' } } },
        },
        turns = { { id = 'T1', model = SONNET, summary = 'global default', status = 'completed' } },
        delegations = {
          { tool_use_id = 'd1', source = 'user', status = 'completed', tier = 'fast', task = 'fix it',
            started_at = '2026-11-24T12:00:02.5Z',
            approval = asked('q4', 'Delegate to a fast worker that may change files',
              { path = vim.NIL, tier = 'fast', worker_tools = {} }),
            approvals = { asked('q5', 'Edit c.py', { diff = '--- a/c.py\n+++ b/c.py\n@@ -1 +1 @@\n-a\n+b\n' }) } },
        },
      }
      local want_diff = { '      │ --- a/a.py', '      │ +++ b/a.py', '      │ @@ -1,20 +1,20 @@' }
      for i = 1, 13 do
        table.insert(want_diff, ('      │ -x = %d'):format(i))
      end
      table.insert(want_diff, '      │ … 14 more lines of the diff') -- 7 not shown, 7 not kept
      table.insert(want_diff, '  ✓ edit_file: edited b.py')
      for _, lines in ipairs({ texts(render.history(ROOT, detail)), texts(render.transcript(ROOT, detail)) }) do
        local all = table.concat(lines, '\n')
        H.eq(want_diff, after(lines, '    ? Edit a.py — Allowed once.', 18), 'the diff, its first 16 lines', all)
        -- (a delegation's start question names its task, the call's)
        H.eq({ '    ? Delegate to a fast worker that may change files: t — Allowed once.' },
          after(lines, '    ? Edit b.py — Allowed once.', 1),
          'an older record: its line alone (the next call\'s start question follows)', all)
        local delegated = after(lines, '    ? Delegate to a fast worker that may change files: t — Allowed once.', 3)
        H.eq('      worker on fast tier · claude-haiku-4-5 · may use edit_file, run_command', delegated[1],
          "the worker's tier, the model the question named and its tools", all)
        -- asked before its worker started: above the worker's line, then the call's result
        H.check(delegated[2]:find('^  ✓ worker fast'), "then the planner's worker line", all)
        H.eq('  ✓ delegate: worker done', delegated[3], "then the call's result", all)
        local start = after(lines, '/delegate fast fix it', 3)
        H.eq({ '    ? Delegate to a fast worker that may change files: fix it — Allowed once.',
          '      worker on fast tier · may use no write tools' }, vim.list_slice(start, 1, 2), "the /delegate's question first", all)
        H.check(start[3]:find('^  ✓ worker fast'), 'then its worker line', all)
        H.eq({ '      │ --- a/c.py', '      │ +++ b/c.py', '      │ @@ -1 +1 @@', '      │ -a', '      │ +b' },
          after(lines, '    ? Edit c.py — Allowed once. (asked by the worker)', 5), "a worker's question's diff", all)
      end
    end,
  },
  {
    "a delegation's start question asked again (its model changed) shows both, the first said to be superseded",
    function()
      local at = '2026-11-24T12:00:01Z'
      local why = 'the model changed from anthropic:claude-haiku-4-5 to anthropic:claude-sonnet-4-6 while the question waited'
      local function asked(id, model, superseded)
        return { id = id, title = 'Delegate to a fast worker that may change files', outcome = 'allowed_once',
          reason = vim.NIL, command = vim.NIL, cwd = vim.NIL, path = vim.NIL, diff = vim.NIL, tier = 'fast', model = model,
          routed_by = vim.NIL, worker_tools = { 'edit_file' }, superseded = superseded or vim.NIL }
      end
      local first = asked('q1', 'anthropic:claude-haiku-4-5', why)
      local last = asked('q2', 'anthropic:claude-sonnet-4-6')
      local detail = {
        messages = {
          { id = 'm1', turn_id = 'T1', role = 'user', created_at = at, content = { { type = 'text', text = 'go' } } },
          { id = 'm2', turn_id = 'T1', role = 'assistant', created_at = at, content = {
            { type = 'tool_use', id = 'tu1', name = 'delegate', input = { tier = 'fast', task = 'fix it' } } } },
          { id = 'm3', turn_id = 'T1', role = 'tool', created_at = at, content = {
            { type = 'tool_result', tool_use_id = 'tu1', content = 'done', summary = 'fast worker done', approval = last,
              superseded_approvals = { first } } } },
          { id = 'm4', turn_id = vim.NIL, role = 'user', created_at = '2026-11-24T12:00:02Z',
            content = { { type = 'text', text = '/delegate fast fix it' } } },
        },
        turns = { { id = 'T1', model = SONNET, summary = 'global default', status = 'completed' } },
        delegations = {
          { tool_use_id = 'd1', source = 'user', status = 'completed', tier = 'fast', task = 'fix it',
            started_at = '2026-11-24T12:00:02.5Z', approval = asked('q4', 'anthropic:claude-sonnet-4-6'),
            superseded_approvals = { asked('q3', 'anthropic:claude-haiku-4-5', why) } },
        },
      }
      local want = {
        '    ? Delegate to a fast worker that may change files: fix it — Allowed once. Superseded, asked again: '
          .. why .. '.',
        '      worker on fast tier · claude-haiku-4-5 · may use edit_file',
        '    ? Delegate to a fast worker that may change files: fix it — Allowed once.',
        '      worker on fast tier · claude-sonnet-4-6 · may use edit_file',
      }
      for name, lines in pairs({ history = texts(render.history(ROOT, detail)), transcript = texts(render.transcript(ROOT,
        detail)) }) do
        local all = table.concat(lines, '\n')
        local worker = 0 -- the planner's worker line: its questions were asked before it started, above it
        for i, line in ipairs(lines) do
          worker = (worker == 0 and line:find('^  ✓ worker fast .* — fix it$')) and i or worker
        end
        H.eq(want, vim.list_slice(lines, worker - 4, worker - 1), name .. ": the planner's call, both questions", all)
        H.eq(want, after(lines, '/delegate fast fix it', 4), name .. ": a /delegate's, both questions above its line", all)
      end
      -- the chat live: the call's result brings both, as rebuilt
      H.eq(want, texts(render.start_questions({ approval = last, superseded_approvals = { first } }, 'fix it')), 'live')
      H.eq({ want[3], want[4] }, texts(render.start_questions({ approval = last }, 'fix it')),
        'asked once (an older daemon too)')
      -- an "always" answer asks no more: its question named haiku, the worker ran on sonnet, and it says so
      local changed = 'the model changed from haiku to sonnet while the question waited'
      local always = vim.tbl_extend('force', asked('q5', 'anthropic:claude-haiku-4-5'),
        { outcome = 'allowed_always', model_changed = changed })
      H.eq('    ? Delegate to a fast worker that may change files — Allowed; delegate is always allowed here now. '
        .. 'Not asked again: ' .. changed .. '.', render.approval(always, 'delegate')[1],
        'an always answer, the model changed after it')
      -- the line names the delegation's task (VS Code's card shows it): on one line, its control characters
      -- shown as the question showed them, cut to fit
      local named = render.approval(
        { title = 'Delegate to a fast worker that may change files', outcome = 'allowed_once' }, 'delegate',
        'fix the\r login\n\nbug\226\128\174 ' .. ('x'):rep(80))
      H.eq('    ? Delegate to a fast worker that may change files: fix the^M login bug<202e> '
        .. ('x'):rep(33) .. '… — Allowed once.', named[1]) -- 59 characters and …
      local title = 'Delegate to a fast worker that may change files'
      H.eq('    ? Delegate to a fast worker that may change files: count lines — Denied.',
        render.approval({ title = title, outcome = 'denied', task = 'count lines' }, 'delegate')[1],
        'a /delegate\'s question answered live keeps its task')
    end,
  },
  {
    "a stored turn another window is still running says so, not a finished turn's cost of $0",
    function()
      -- the chat drawn again while another window's turn streamed ended it with
      -- `  haiku · $0.000000 · 0 in / 0 out tokens`, as if it had finished costing nothing
      local at = '2026-11-24T12:00:01Z'
      local detail = {
        messages = {
          { id = 'm1', turn_id = 'T1', role = 'user', created_at = at, content = { { type = 'text', text = 'go' } } },
          { id = 'm2', turn_id = 'T1', role = 'assistant', created_at = at, content = { { type = 'text', text = 'So far' } } },
        },
        turns = { { id = 'T1', model = SONNET, summary = 'global default', status = 'running', cost_usd = '0.000000',
          usage = { input_tokens = 0, output_tokens = 0 } } },
      }
      local lines = vim.tbl_map(function(l)
        return l[1]
      end, render.history(ROOT, detail))
      H.eq(' · still running (started in another window or editor)', lines[#lines]:match(' · .*$'),
        table.concat(lines, '\n'))
    end,
  },
  {
    'a no-model-available error shows the explanation the daemon rendered',
    function()
      local lines = render.rpc_error({ code = 1006, message = 'No model available for this message.',
        data = { code = 'no_model_available', text = 'Chain:\n  [1] ...' } })
      H.eq({ '✗ No model available for this message.', 'Chain:', '  [1] ...' }, vim.tbl_map(function(l)
        return l[1]
      end, lines))
    end,
  },
  {
    'costs shown together share their decimals, each keeping every digit it showed alone ($0.00 beside $0.00004)',
    function()
      local cost, workers = require('switchman.cost'), require('switchman.chat.workers')
      H.eq({ '$0.00000', '$0.00004', '$0.04120' }, cost.usds({ '0', '0.00004', '0.0412' }, workers.usd))
      H.eq({ '$0.25', '$0.01' }, cost.usds({ '0.25', '0.01' }, workers.usd), 'amounts in cents stay as they are')
      H.eq({ '$0.010000', '$0.000045', '$0.000000' }, cost.usds({ '0.01', '0.000045', vim.NIL }),
        "the daemon's exact figures, a missing one as zero")
      H.eq({}, cost.usds({}))
      H.eq('$0.04120 (~$0.00190 estimated)', cost.line('0.0412', '0.0019', { money = workers.usd, alongside = { '0.00004' } }),
        'a cost and its estimated part take the decimals of the amounts beside them')
      H.eq('$0.04', cost.line('0.0412', nil, { money = workers.usd }), 'alone, as before')
      -- :Switchman sessions (workers): one list
      local flat = sessions.flatten({ session('b', { vim.tbl_extend('force', session('b1'), { cost_usd = '0.000045' }) }) })
      local costs = { '0.01', '0.000045' }
      H.eq('2026-05-08 14:23  task b  (1 turn · $0.010000 · claude-haiku-4-5)', sessions.describe(ROOT, flat[1], 'a', costs):sub(3))
      H.eq('  ↳ 2026-05-08 14:23  task b1  (1 turn · $0.000045 · claude-haiku-4-5)',
        sessions.describe(ROOT, flat[2], 'a', costs):sub(3))
      -- a cost Switchman estimated (a worker stopped before the provider reported usage) says so
      local stopped = { session = vim.tbl_extend('force', session('w'), { cost_usd = '0.000020', estimated_usd = '0.000020',
        delegation_status = 'cancelled' }), depth = 1 }
      H.eq('  ↳ 2026-05-08 14:23  task w  (stopped · 1 turn · ~$0.000020 (estimated) · claude-haiku-4-5)',
        sessions.describe(ROOT, stopped, 'a', { '0.000020', '0.000045' }):sub(3), 'it read $0.000020, as if billed')
      local part = { session = vim.tbl_extend('force', session('p'), { cost_usd = '0.041200', estimated_usd = '0.001900' }),
        depth = 0 }
      H.eq('2026-05-08 14:23  task p  (1 turn · $0.041200 (~$0.001900 estimated) · claude-haiku-4-5)',
        sessions.describe(ROOT, part, 'a', { '0.041200' }):sub(3))
      -- :Switchman workers: one list
      local items = {
        { session = { id = 'w1', turn_count = 1, cost_usd = '0', last_model = HAIKU, title = 'first' } },
        { live = { tier = 'fast', model = HAIKU, status = 'completed', turns = 1, cost_usd = '0.00004', task = 'second' } },
      }
      costs = vim.tbl_map(workers.row_cost, items)
      H.eq({ '0', '0.00004' }, costs)
      H.eq('worker · claude-haiku-4-5 · 1 turn · $0.00000 — first', workers.describe(ROOT, items[1], costs))
      H.eq('✓ worker fast · claude-haiku-4-5 · completed · 1 turn · $0.00004 — second', workers.describe(ROOT, items[2], costs))
      -- the chat drawn from a session: a turn's worker lines are one list, another turn's another
      local function worker(id, usd)
        return { parent_tool_use_id = id, cost_usd = usd, turns = 1, model = HAIKU }
      end
      local function call(id, task)
        return { type = 'tool_use', id = id, name = 'delegate', input = { tier = 'fast', task = task } }
      end
      local function result(id)
        return { type = 'tool_result', tool_use_id = id, content = 'ok', is_error = false }
      end
      local stored = workers.stored(ROOT, {
        messages = {
          { role = 'assistant', turn_id = 'T1', content = { call('a', 'one'), call('b', 'two') } },
          { role = 'tool', turn_id = 'T1', content = { result('a'), result('b') } },
          { role = 'assistant', turn_id = 'T2', content = { call('c', 'three') } },
          { role = 'tool', turn_id = 'T2', content = { result('c') } },
        },
        cost = { workers = { worker('a', '0.000000'), worker('b', '0.000040'), worker('c', '0.000000') } },
      })
      H.eq({
        a = '  ✓ worker fast · claude-haiku-4-5 · completed · 1 turn · $0.00000 — one',
        b = '  ✓ worker fast · claude-haiku-4-5 · completed · 1 turn · $0.00004 — two',
        c = '  ✓ worker fast · claude-haiku-4-5 · completed · 1 turn · $0.00 — three',
      }, vim.tbl_map(function(entry)
        return entry[1]
      end, stored))
      local by_user = workers.stored_by_user(ROOT, {
        delegations = { { tool_use_id = 'u1', source = 'user', tier = 'fast', task = 'x', status = 'completed' },
          { tool_use_id = 'u2', source = 'user', tier = 'fast', task = 'y', status = 'completed' } },
        cost = { workers = { worker('u1', '0.000000'), worker('u2', '0.000040') } },
      })
      H.eq({ '$0.00000', '$0.00004' }, vim.tbl_map(function(item)
        return item.line[1]:match('%$[%d.]+')
      end, by_user), 'your own /delegates too')
    end,
  },
  {
    'sessions: workers are nested under their planner',
    function()
      local flat = sessions.flatten({ session('b', { session('b1'), session('b2', { session('b2a') }) }), session('a') })
      H.eq({ 'b:0', 'b1:1', 'b2:1', 'b2a:2', 'a:0' }, vim.tbl_map(function(item)
        return item.session.id .. ':' .. item.depth
      end, flat))
      H.eq('  ↳ 2026-05-08 14:23  task b1  (1 turn · $0.01 · claude-haiku-4-5)', sessions.describe(ROOT, flat[2], 'a'):sub(3))
      H.check(sessions.describe(ROOT, flat[5], 'a'):find('^● '), 'the current session is marked')
      -- a worker whose delegation failed or was stopped says so (it looked like one that did its task)
      local function worker(status)
        return { session = vim.tbl_extend('force', session('w'), { delegation_status = status }), depth = 1 }
      end
      H.eq('  ↳ 2026-05-08 14:23  task w  (failed · 1 turn · $0.01 · claude-haiku-4-5)',
        sessions.describe(ROOT, worker('failed'), 'a'):sub(3))
      H.check(sessions.describe(ROOT, worker('cancelled'), 'a'):find('(stopped · 1 turn', 1, true), 'stopped')
      H.check(sessions.describe(ROOT, worker('running'), 'a'):find('(running · 1 turn', 1, true), 'running')
      H.check(sessions.describe(ROOT, worker('completed'), 'a'):find('(1 turn', 1, true), 'done: as before')
      H.check(sessions.describe(ROOT, worker(vim.NIL), 'a'):find('(1 turn', 1, true), 'not known: as before')
    end,
  },
  {
    'the daemon and version commands',
    function()
      H.eq({ 'switchman', '--version' }, config.version_cmd())
      config.apply({ cmd = { 'uvx', 'switchman', 'serve', '--log-level', 'debug' } })
      H.eq({ 'uvx', 'switchman', '--version' }, config.version_cmd())
      config.apply({ python = '/opt/py/bin/python3' })
      H.eq({ '/opt/py/bin/python3', '-m', 'switchman.server.cli', 'serve' }, config.server_cmd())
      config.apply({})
    end,
  },
  {
    'which files are Switchman configuration, and the workspace of each',
    function()
      local base = vim.fn.tempname()
      local cfg, project = base .. '/cfg', base .. '/project'
      vim.fn.mkdir(cfg, 'p')
      vim.fn.mkdir(project .. '/.switchman', 'p')
      vim.fn.mkdir(project .. '/src/deep', 'p')
      config.apply({ config_dir = cfg })
      H.eq('routing', workspace.config_kind(cfg .. '/routing.yaml'))
      H.eq('models', workspace.config_kind(cfg .. '/models.yaml'))
      H.eq('workspace', workspace.config_kind(project .. '/.switchman/routing.yaml'))
      H.eq('profiles', workspace.config_kind(cfg .. '/profiles.yaml'))
      H.eq('workspace-profiles', workspace.config_kind(project .. '/.switchman/profiles.yaml'))
      H.eq(nil, workspace.config_kind(project .. '/routing.yaml'))
      H.eq(nil, workspace.config_kind(project .. '/.switchman/models.yaml'))
      H.eq(workspace.normalize(project), workspace.root_for_path(project .. '/.switchman/routing.yaml'))
      H.eq(workspace.normalize(project), workspace.root_for_path(project .. '/src/deep/x.py'), 'found by marker')
      -- a workspace's `.switchman` linked to a folder inside it: Neovim names its files by the link's target
      local linked = base .. '/linked'
      vim.fn.mkdir(linked .. '/config/switchman', 'p')
      vim.loop.fs_symlink(linked .. '/config/switchman', linked .. '/.switchman')
      H.eq('workspace', workspace.config_kind(linked .. '/config/switchman/routing.yaml'), 'named back through the link')
      H.eq(workspace.normalize(linked), workspace.root_for_path(linked .. '/config/switchman/profiles.yaml'))
      -- your config folder called `.switchman`, linked to a dotfiles folder inside the folder above it: yours
      local home = base .. '/home'
      vim.fn.mkdir(home .. '/dotfiles/switchman', 'p')
      vim.loop.fs_symlink(home .. '/dotfiles/switchman', home .. '/.switchman')
      config.apply({ config_dir = home .. '/.switchman' })
      H.eq('routing', workspace.config_kind(home .. '/dotfiles/switchman/routing.yaml'), 'by the name Neovim gives it')
      H.eq('routing', workspace.config_kind(home .. '/.switchman/routing.yaml'), 'by the name opened')
      config.apply({})
      vim.env.XDG_CONFIG_HOME = base .. '/xdg'
      local saved = vim.env.SWITCHMAN_CONFIG_DIR
      vim.env.SWITCHMAN_CONFIG_DIR = nil
      H.eq(base .. '/xdg/switchman', workspace.config_dir(), 'the platform folder (Linux)')
      vim.env.SWITCHMAN_CONFIG_DIR = saved
    end,
  },
  {
    'Apply sends the selected lines, or the whole file; its outcome reads plainly',
    function()
      local apply = require('switchman.apply')
      local buf = vim.api.nvim_create_buf(true, false)
      vim.api.nvim_buf_set_name(buf, '/nowhere/src/a.py')
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'a', 'b', 'c' })
      local whole = apply.params('/nowhere', buf, 'x = 1', 'T1')
      H.eq({ 'a\nb\nc\n', 'x = 1\n', nil, 'T1' }, { whole.text, whole.code, whole.range, whole.turn_id },
        'no selection: the whole file, ending with a line break like the file')
      vim.api.nvim_buf_set_mark(buf, '<', 2, 0, {})
      vim.api.nvim_buf_set_mark(buf, '>', 3, 0, {})
      local lines = apply.params('/nowhere', buf, 'x = 1')
      H.eq({ line = 1, character = 0 }, lines.range.start, 'from the start of the first selected line')
      H.eq({ line = 2, character = 2147483647 }, lines.range['end'], 'to the end of the last')
      H.eq('x = 1', lines.code)
      H.eq({ 'Switchman: not applied to a.py (no)', vim.log.levels.INFO },
        { apply.outcome({ applied = false, decision = 'deny', path = 'a.py', reason = 'no' }) })
      H.eq({ 'Switchman: applied to a.py and saved (u undoes it)', vim.log.levels.INFO },
        { apply.outcome({ applied = true, decision = 'allow_once', path = 'a.py', reason = vim.NIL }) })
      H.eq({ 'Switchman: applied to a.py, but: not saved (read-only)', vim.log.levels.WARN },
        { apply.outcome({ applied = true, decision = 'allow_once', path = 'a.py', reason = 'not saved (read-only)' }) },
        'applied, but the buffer could not be written')
      H.eq({ 'Switchman: a.py already has this code: there is nothing to change.', vim.log.levels.INFO },
        { apply.outcome({ applied = false, unchanged = true, decision = 'deny', path = 'a.py',
          reason = 'a.py already has this code: there is nothing to change.' }) },
        'the file already had the code: nothing was asked, and it is not called a denial')
      vim.api.nvim_buf_delete(buf, { force = true })
    end,
  },
  {
    "the test harness's H.stub_select reads each question's own labels (the second read the first's)",
    function()
      local seen, asked = H.stub_select(function(_, label)
        return label == 'Deny' or label == 'Back'
      end)
      local chosen = {}
      local function choose(item)
        table.insert(chosen, item or 'nothing')
      end
      vim.ui.select({ 'Allow once', 'Deny' }, {}, choose)
      vim.ui.select({ 'Open transcript', 'Stop this worker', 'Back' }, {}, choose)
      H.eq({ 'Deny', 'Back' }, chosen, 'each question picked by its own labels')
      H.eq({ 'Open transcript', 'Stop this worker', 'Back' }, seen, 'the last question')
      H.eq({ { 'Allow once', 'Deny' }, { 'Open transcript', 'Stop this worker', 'Back' } }, asked, 'every question')
    end,
  },
  {
    'the approval question names the command, or the delegation with its tools',
    function()
      local approval = require('switchman.approval')
      H.eq('Switchman wants to run `make` in /w', approval.prompt({ tool = 'run_command', command = 'make', cwd = '/w' }))
      H.eq('Switchman wants to delegate to a fast worker with edit_file, run_command: fix it (asked by a worker: '
        .. 'an answer to a worker is not remembered, so it may ask again)', approval.prompt({ tool = 'delegate',
          tier = 'fast', worker_tools = { 'edit_file', 'run_command' }, task = 'fix it\nthen test', command = vim.NIL,
          is_worker = true }))
      local function labels(request)
        local seen = H.stub_select(function()
          return false
        end)
        approval.ask(request, function() end)
        return seen
      end
      H.eq({ 'Allow once', 'Always allow edit_file in this workspace', 'Deny' },
        labels({ tool = 'edit_file', title = 'Edit a.py', is_worker = false }))
      H.eq({ 'Allow once', 'Deny' }, labels({ tool = 'edit_file', title = 'Edit a.py', is_worker = true }),
        'a worker\'s question offers no "always": nothing given to a worker is remembered')
      H.eq({ 'Delegate to a worker on the fast tier.', 'The worker may use: edit_file', '', 'Task:', 'fix it' },
        approval.delegation_lines({ tier = 'fast', worker_tools = { 'edit_file' }, task = 'fix it' }))
      -- the tier floor lowered the planner's deep: the tier the worker runs on, said capped
      local capped = { tool = 'delegate', tier = 'balanced', requested_tier = 'deep', worker_tools = { 'edit_file' },
        task = 'fix it', command = vim.NIL }
      H.eq('Delegate to a worker on the balanced tier.', approval.delegation_lines(capped)[1],
        'the question shown with the tab says it was capped: the tab does not say it again')
      H.eq('Switchman wants to delegate to a balanced worker (deep, capped by the tier floor) with edit_file: fix it',
        approval.prompt(capped))
      local shown = approval.prompt(capped) .. '\n' .. table.concat(approval.delegation_lines(capped), '\n')
      H.eq(1, select(2, shown:gsub('capped by the tier floor', '')), 'said once by the question and its tab together')
      H.eq('Delegate to a worker on the fast tier.', approval.delegation_lines({ tier = 'fast', requested_tier = vim.NIL,
        worker_tools = { 'edit_file' }, task = 'fix it' })[1], 'not capped: requested_tier is null')
      -- the model the worker will run on (routed before asking), and what chose it when its tier did not
      local routed = vim.tbl_extend('force', capped, { model = 'anthropic:claude-sonnet-4-6', routed_by = vim.NIL })
      H.eq('Switchman wants to delegate to a balanced worker (deep, capped by the tier floor) on claude-sonnet-4-6 with '
        .. 'edit_file: fix it', approval.prompt(routed))
      H.eq('Delegate to a worker on the balanced tier, running claude-sonnet-4-6.', approval.delegation_lines(routed)[1])
      local ruled = { tool = 'delegate', tier = 'fast', model = 'anthropic:claude-opus-4-7', routed_by = 'rule: docs',
        worker_tools = { 'edit_file' }, task = 'fix it', command = vim.NIL }
      H.eq('Switchman wants to delegate to a fast worker on claude-opus-4-7 (rule: docs) with edit_file: fix it',
        approval.prompt(ruled))
      -- asked again (the model changed while the first question waited): the question says why as it is shown
      local why = 'the model changed from anthropic:claude-haiku-4-5 to anthropic:claude-sonnet-4-6 while the question waited'
      local again = vim.tbl_extend('force', routed, { asked_again = why })
      H.eq(approval.prompt(routed) .. ' (asked again: ' .. why .. ')', approval.prompt(again))
      H.eq('Asked again: ' .. why .. '.', approval.delegation_lines(again)[2], 'and its tab, under the worker line')
      H.eq(approval.delegation_lines(routed), approval.delegation_lines(vim.tbl_extend('force', routed,
        { asked_again = vim.NIL })), 'asked once: as before')
      -- a command of several lines: its first in the question (which had the line breaks in it, and
      -- nothing showed the command whole), all of it in a tab while asked
      local script = 'for f in *.py; do\n  black "$f"\ndone'
      local request = { id = 'cmd1', tool = 'run_command', tool_class = 'execute', command = script, cwd = '/w',
        title = 'Run a command' }
      H.eq('Switchman wants to run `for f in *.py; do …` in /w (the whole command is in the new tab)',
        approval.prompt(request))
      local shown
      vim.ui.select = function(items, _, on_choice)
        shown = H.lines(0)
        on_choice(items[1], 1)
      end
      local tabs = #vim.api.nvim_list_tabpages()
      H.eq('allow_once', approval.handle(nil, request, nil, '/w').decision)
      H.eq({ 'Run in /w:', '', 'for f in *.py; do', '  black "$f"', 'done' }, shown, 'the whole command, while asked')
      H.eq(tabs, #vim.api.nvim_list_tabpages(), 'its tab closed with the answer')
    end,
  },
  {
    'an approval asked while you work in a tab page before others goes back to that tab page when answered',
    function()
      local approval = require('switchman.approval')
      vim.cmd('tabnew') -- a second tab page of yours, right of the first
      vim.cmd('tabprevious')
      local at = vim.api.nvim_get_current_tabpage()
      local orig = vim.ui.select
      vim.ui.select = function(items, _, on_choice)
        on_choice(items[1], 1)
      end
      local requests = {
        { id = 'tab1', tool = 'run_command', tool_class = 'execute', command = 'a\nb', cwd = '/w', title = 'Run' },
        { id = 'tab2', tool = 'edit_file', tool_class = 'write', path = 'src/x.py', original = 'a\n', proposed = 'b\n',
          title = 'Edit src/x.py' },
      }
      for _, request in ipairs(requests) do
        H.eq('allow_once', approval.handle(nil, request, nil, '/w').decision)
        -- closing the question's tab page went to the one right of it, another of yours
        H.eq(at, vim.api.nvim_get_current_tabpage(), 'back in the tab page you were in: ' .. request.id)
      end
      vim.ui.select = orig
      vim.cmd('tabonly')
    end,
  },
  {
    'the approval question shows what a command hides from the eye: a carriage return, escapes, bidi controls, blank lines',
    function()
      local approval = require('switchman.approval')
      -- printed as they are, `\r` sent the prompt's cursor back to its start, so
      -- `touch x #\rls -la` read as `ls -la …`, and an escape sequence could clear the line
      H.eq('Switchman wants to run `touch x #^Mls -la` in /w',
        approval.prompt({ tool = 'run_command', command = 'touch x #\rls -la', cwd = '/w' }))
      H.eq('Switchman wants to run `echo ^[[2Jok` in /w',
        approval.prompt({ tool = 'run_command', command = 'echo \27[2Jok', cwd = '/w' }))
      H.eq('Switchman wants to run `ls<202e> ;x<202c>` in /w',
        approval.prompt({ tool = 'run_command', command = 'ls\226\128\174 ;x\226\128\172', cwd = '/w' }))
      H.eq('Switchman wants to delegate to a fast worker with edit_file: fix it^Mtidy up', approval.prompt({
        tool = 'delegate', tier = 'fast', worker_tools = { 'edit_file' }, task = 'fix it\rtidy up', command = vim.NIL }))
      -- the answered question's line in the chat shows its title's control characters as the question did
      -- (the daemon's title keeps a `\r`: only a line break ends its line)
      H.eq('    ? Run `touch x #^Mls -la<202e>` — Denied.', require('switchman.render').approval(
        { title = 'Run `touch x #\rls -la\226\128\174`', outcome = 'denied' }, 'run_command')[1])
      -- forty empty lines pushed the rest of a command below the tab's last row, out of sight while
      -- the question (a prompt that cannot be scrolled past) waited
      local hidden = 'echo checking' .. string.rep('\n', 40) .. 'touch x'
      H.eq({ 'Run in /w:', '', 'echo checking', '[39 empty lines]', 'touch x' },
        approval.command_lines({ command = hidden, cwd = '/w' }))
      H.eq({ 'Run in /w:', '', 'a', '', '', 'b' }, approval.command_lines({ command = 'a\n\n\nb', cwd = '/w' }),
        'two empty lines are shown as they are')
    end,
  },
  {
    "a message that quotes the model's text shows its control characters as the question did: withdrawn, not applied",
    function()
      local approval = require('switchman.approval')
      local function notified(request, pick)
        H.notifications = {}
        vim.ui.select = function(items, _, on_choice)
          if pick then
            return on_choice(items[1], 1)
          end
          approval.withdraw_root('/withdrawn-root', 'Switchman no longer needs this answer.')
        end
        approval.handle(nil, request, nil, '/withdrawn-root')
        return vim.tbl_map(function(n)
          return n.message
        end, H.notifications)
      end
      -- a withdrawn question's title: printed as it was, `\r` sent the message line's cursor back to its
      -- start, so `touch x #\rls -la` read as `ls -la`
      H.eq({ 'Run `touch x #^Mls -la<202e>`: Switchman no longer needs this answer.' }, notified({ id = 'w1',
        tool = 'run_command', tool_class = 'execute', command = 'touch x #\rls -la\226\128\174', cwd = '/w',
        title = 'Run `touch x #\rls -la\226\128\174`' }))
      -- an allowed edit not applied (the buffer changed meanwhile) names the tool call's path
      local path = vim.fn.tempname() .. '-a\rb\226\128\174.py'
      vim.cmd('edit ' .. vim.fn.fnameescape(path))
      vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'typed meanwhile' })
      local messages = notified({ id = 'w2', tool = 'edit_file', tool_class = 'write', uri = vim.uri_from_fname(path),
        path = 'a\rb\226\128\174.py', original = 'x\n', proposed = 'y\n', title = 'Edit a.py' }, true)
      vim.cmd('bwipeout!')
      H.check(#messages == 1 and messages[1]:find('^Switchman: not applied: a^Mb<202e>%.py changed in the editor'),
        'the path as the question showed it', messages)
      -- a delegation that never started a worker: its error can quote the planner's tool call
      H.eq('Switchman: this delegation never started a worker (failed: no tier "x^My<202e>"), so it has no transcript.',
        require('switchman.chat.workers').never_started({ status = 'failed', error = 'no tier "x\ry\226\128\174"' }))
      -- yanking a code block names the fence's language, the model's text
      local render = require('switchman.render')
      H.eq('Switchman: yanked 1 line(s) of py^Mthon<202e>', render.yanked({ lines = { 'x' }, lang = 'py\rthon\226\128\174' }))
      H.eq('Switchman: yanked 2 line(s) of code', render.yanked({ lines = { 'x', 'y' }, lang = '' }))
      -- the pickers' lines (inputlist prints them): a worker's task, a session's title
      local workers = require('switchman.chat.workers')
      local task = 'fix it\rrm -rf ~\226\128\174'
      H.check(workers.describe(ROOT, { live = { tier = 'fast', model = HAIKU, status = 'completed', turns = 1,
        cost_usd = '0', task = task } }, { '0' }):find('rm -rf ~<202e>', 1, true), 'the live worker\'s task',
        workers.describe(ROOT, { live = { tier = 'fast', status = 'completed', task = task } }, { '0' }))
      H.check(workers.describe(ROOT, { session = { id = 'w1', turn_count = 1, cost_usd = '0', last_model = HAIKU,
        title = task } }, { '0' }):find('rm -rf ~<202e>', 1, true), "a stored worker's title")
      H.check(require('switchman.sessions').describe(ROOT, { session = { id = 's', title = task, turn_count = 1,
        cost_usd = '0', last_model = HAIKU, updated_at = '2026-05-08T14:23:00Z' }, depth = 0 }, 'a', { '0' })
        :find('fix it^Mrm -rf ~<202e>', 1, true), "a session's title")
    end,
  },
  {
    'a delegation\'s task and an edit\'s diff are shown as a command is: runs of empty lines folded, long lines wrapped, controls drawn',
    function()
      local approval = require('switchman.approval')
      local function screen()
        vim.cmd('redraw')
        local rows = {}
        for row = 1, vim.o.lines do
          local text = ''
          for col = 1, vim.o.columns do
            text = text .. vim.fn.screenstring(row, col)
          end
          table.insert(rows, text)
        end
        return table.concat(rows, '\n')
      end
      local function asked(request)
        local seen
        vim.ui.select = function(items, _, on_choice)
          seen = { screen = screen(), wins = {} }
          for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
            table.insert(seen.wins, { lines = H.lines(vim.api.nvim_win_get_buf(win)), wrap = vim.wo[win].wrap })
          end
          on_choice(items[#items], #items) -- Deny
        end
        vim.ui.input = function(_, on_input)
          on_input('')
        end
        H.eq('deny', approval.handle(nil, request, nil, '/w').decision)
        return seen
      end
      -- a task of forty empty lines then more: the tab showed its first line only
      local task = 'tidy the README' .. string.rep('\n', 41) .. 'then rm -rf ~ \226\128\174 quietly'
      local delegation = asked({ id = 'd1', turn_id = 'pol-t1', tool = 'delegate', tool_class = 'delegate', tier = 'fast',
        worker_tools = { 'run_command' }, task = task, command = vim.NIL, title = 'Delegate' })
      H.eq({ 'Task:', 'tidy the README', '[40 empty lines]', 'then rm -rf ~ \226\128\174 quietly' },
        vim.list_slice(delegation.wins[1].lines, 4), 'the task in the tab')
      H.check(delegation.screen:find('then rm -rf ~ <202e> quietly', 1, true), 'the override drawn by name',
        delegation.screen)
      -- an edit whose new text hides a line below forty empty ones, and another far to the right
      local original = 'a = 1\n'
      local proposed = 'a = 1' .. string.rep(' ', 200) .. 'import os\n' .. string.rep('\n', 40) .. 'os.remove("x")\n'
      vim.o.columns = 80
      local edit = asked({ id = 'e1', tool = 'edit_file', tool_class = 'write', path = 'src/app.py',
        uri = 'file:///w/src/app.py', original = original, proposed = proposed, title = 'Edit src/app.py' })
      H.eq({ 'a = 1' .. string.rep(' ', 200) .. 'import os', '[40 empty lines]', 'os.remove("x")' }, edit.wins[2].lines,
        'the proposed side')
      H.eq({ true, true }, { edit.wins[1].wrap, edit.wins[2].wrap }, 'both sides wrap: the end of a long line is seen')
      H.check(edit.screen:find('os.remove', 1, true) and edit.screen:find('import os', 1, true), 'all of it on screen',
        edit.screen)
    end,
  },
  {
    'a stored session that cost nothing says so under its cost heading (the heading stood alone)',
    function()
      local lines = vim.tbl_map(function(l)
        return l[1]
      end, render.transcript(ROOT, { session = { id = 'W', title = 'task', turn_count = 1, cost_usd = '0.000000' },
        cost = { by_model = {}, workers = {} } }))
      local at = H.check(vim.fn.index(lines, 'Cost by model:') + 1, 'the heading', lines)
      H.eq('  nothing charged', lines[at + 1], table.concat(lines, '\n'))
    end,
  },
  {
    'a stored turn\'s heading names the part of its cost Switchman estimated, as the session\'s line does',
    function()
      local lines = vim.tbl_map(function(l)
        return l[1]
      end, render.transcript(ROOT, { session = { id = 'W', title = 'task', turn_count = 2, cost_usd = '0.000065',
        estimated_usd = '0.000020' }, turns = {
          { id = 'T1', index = 1, model = HAIKU, cost_usd = '0.000020', estimated_usd = '0.000020', status = 'cancelled' },
          { id = 'T2', index = 2, model = HAIKU, cost_usd = '0.000045', estimated_usd = '0.000000', status = 'completed' } },
        messages = { { role = 'user', turn_id = 'T1', content = { { type = 'text', text = 'count' } } },
          { role = 'user', turn_id = 'T2', content = { { type = 'text', text = 'again' } } } } }))
      H.check(vim.tbl_contains(lines, '## Turn 1 · claude-haiku-4-5 · ~$0.000020 (estimated) · cancelled'),
        'a turn stopped before the provider reported usage (it read $0.000020, as if billed)', table.concat(lines, '\n'))
      H.check(vim.tbl_contains(lines, '## Turn 2 · claude-haiku-4-5 · $0.000045 · completed'), 'a billed one as before',
        table.concat(lines, '\n'))
    end,
  },
  {
    'a stored session\'s cost names each worker by its task',
    function()
      local lines = {}
      for _, line in ipairs(render.transcript(ROOT, { session = { id = 'P', title = 'plan', turn_count = 1,
        created_at = '2026-05-08T14:20:00.464000Z', cost_usd = '0.006' }, cost = {
        by_model = {}, workers = { { session_id = 'W1', title = 'Refactor auth', model = HAIKU, cost_usd = '0.002', turns = 1 },
          { session_id = 'W2', model = HAIKU, cost_usd = '0.001', turns = 2 },
          { session_id = 'W3', model = HAIKU, cost_usd = '0.0019', turns = 1, estimated_usd = '0.0019' },
          { session_id = 'W4', model = HAIKU, cost_usd = '0.003', turns = 2, estimated_usd = '0.0019' } } } })) do
        table.insert(lines, line[1])
      end
      H.check(vim.tbl_contains(lines, '  ↳ worker Refactor auth  claude-haiku-4-5  $0.002  (1 turn)'), table.concat(lines, '\n'))
      H.check(vim.tbl_contains(lines, '  ↳ worker W2  claude-haiku-4-5  $0.001  (2 turns)'), 'no title: the session id')
      H.eq('Session P  ·  2026-05-08 14:20  ·  1 turn  ·  $0.006', lines[2],
        'one turn, not "1 turns"; the time as the session picker shows it, not 2026-05-08T14:20:00.464000Z')
      H.check(vim.tbl_contains(lines, '  ↳ worker W3  claude-haiku-4-5  ~$0.0019  (1 turn)  (estimated)'),
        'a cost all estimated says so once', table.concat(lines, '\n'))
      H.check(vim.tbl_contains(lines, '  ↳ worker W4  claude-haiku-4-5  $0.0030  (2 turns)  (~$0.0019 estimated)'),
        'a cost partly estimated names the part', table.concat(lines, '\n'))
    end,
  },
  {
    'a message refused before anything was sent or done goes back to the input; a failed turn does not',
    function()
      local chat = require('switchman.chat').get('/refusals', true)
      local function answered(text, err, result)
        vim.api.nvim_buf_set_lines(chat.view.input, 0, -1, false, { '' })
        local turn = { streamed = '', answered = false, text = text }
        chat.turn = turn
        chat:finish(turn, err, result)
        return H.lines(chat.view.input)
      end
      for _, code in ipairs({ 'unknown_alias', 'invalid_text', 'data_folder_unusable', 'override_unusable',
        'delegation_disabled' }) do
        H.eq({ '/route override' }, answered('/route override', { code = 1, message = 'Not sent.', data = { code = code } }),
          code)
      end
      H.eq({ '' }, answered('hi', { code = -32603, message = 'Internal error.', data = {} }), 'no code: not known to be unsent')
      local refused = { kind = 'command', session_id = 'S1', status = 'failed', summary = '/delegate',
        text = 'Delegation is turned off: `delegation: {enabled: false}` in routing.yaml. Nothing was delegated.',
        error = { code = 'delegation_disabled', message = 'Delegation is turned off.' } }
      H.eq({ '/delegate fast fix it' }, answered('/delegate fast fix it', nil, refused), 'a refused command')
      H.check(H.text(chat.view.transcript):find('✗ Delegation is turned off', 1, true), 'shown as a failure',
        H.lines(chat.view.transcript))
    end,
  },
  {
    "a worker's handoff names the tools the planner asked for and the worker did not get, with why",
    function()
      local lines = vim.tbl_map(function(l)
        return l[1]
      end, require('switchman.handoff').lines(ROOT, {
        reason = 'planner_delegate', source = { model = OPUS, profile = { name = 'default', resolved_from = 'global' } },
        target = { tier = 'fast', profile = { name = 'reader', resolved_from = 'session' } },
        capability_scope = { tools = { 'read_file' }, dropped_tools = { 'memory_add' }, approval = 'read_only',
          withheld_tools = { run_command = 'you do not have it', edit_file = "the worker's profile 'reader' does not permit it" } },
        model_policy = { tiers = { fast = HAIKU } }, budget = { timeout_seconds = 600, max_tokens = vim.NIL } }))
      H.eq('Dropped: memory_add', lines[#lines - 1])
      H.eq("Withheld: edit_file (the worker's profile 'reader' does not permit it); run_command (you do not have it)",
        lines[#lines])
      H.eq('Tools:   read_file (read-only)', lines[4])
    end,
  },
  {
    'a worker the tier floor capped is handed over as the tier it runs on (it read "deep worker")',
    function()
      local function to(target)
        target.profile = { name = 'reader', resolved_from = 'session' }
        return require('switchman.handoff').lines(ROOT, {
          reason = 'planner_delegate', source = { model = OPUS, profile = { name = 'default', resolved_from = 'global' } },
          target = target, capability_scope = { tools = { 'read_file' }, approval = 'read_only' },
          model_policy = { tiers = { fast = HAIKU } }, budget = { timeout_seconds = 600 } })[3][1]
      end
      H.eq('To:      balanced worker (deep, capped by the tier floor), profile reader (chosen)',
        to({ tier = 'deep', worker_tier = 'balanced' }))
      -- not capped, or a record from before `worker_tier`: as before
      H.eq('To:      deep worker, profile reader (chosen)', to({ tier = 'deep', worker_tier = 'deep' }))
      H.eq('To:      deep worker, profile reader (chosen)', to({ tier = 'deep', worker_tier = vim.NIL }))
      H.eq('To:      deep worker, profile reader (chosen)', to({ tier = 'deep' }))
    end,
  },
}
