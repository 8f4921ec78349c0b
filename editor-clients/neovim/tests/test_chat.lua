-- :Switchman chat: streamed answers, the route badge, tools, cancel and failures.
local H = require('harness')
local chat_module = require('switchman.chat')
local workspace = require('switchman.workspace')

local root = workspace.normalize(vim.env.SWITCHMAN_TEST_WORKSPACE)
local chat

local function transcript()
  return chat.view.transcript
end

--- Type a message into the input area and press <C-s>, as a user would.
local function type_and_send(message)
  vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.view.input)[1])
  vim.api.nvim_buf_set_lines(chat.view.input, 0, -1, false, vim.split(message, '\n', { plain = true }))
  H.feed('<C-s>')
end

local function wait_idle()
  H.wait_for('the turn to end', function()
    return chat.turn == nil
  end, nil, function()
    return H.lines(transcript())
  end)
end

return {
  {
    ':Switchman chat opens a transcript and an input area',
    function()
      vim.cmd('Switchman chat')
      chat = H.check(chat_module.get(root), 'a chat for the workspace')
      H.eq(chat.view.input, vim.api.nvim_get_current_buf(), 'the cursor is in the input area')
      H.check(#vim.fn.win_findbuf(transcript()) == 1, 'the transcript is shown')
      H.eq('nofile', vim.bo[transcript()].buftype, 'a scratch buffer')
      H.eq(false, vim.bo[transcript()].modifiable, 'the transcript is read-only')
    end,
  },
  {
    'an answer streams into the buffer under its route badge (the stream stalls half-way)',
    function()
      H.script({ { kind = 'text', chunks = { 'Hel', 'lo, ', 'world' }, fault = { kind = 'stall', after_chunks = 1 } } })
      type_and_send('write a commit message for the login fix')
      H.wait_text(transcript(), '## Switchman [haiku · rule: fast for commits]')
      -- The daemon's first provider request imports the SDK: slow on a busy machine.
      H.wait_text(transcript(), 'Hel', 40000)
      H.check(chat.turn ~= nil, 'the turn is still running while the first chunk shows')
      H.check(not H.text(transcript()):find('world', 1, true), 'the rest has not arrived yet', H.lines(transcript()))
      H.eq({ '' }, H.lines(chat.view.input), 'the input was cleared')
      H.check(H.text(transcript()):find('## You\nwrite a commit message for the login fix', 1, true),
        'the message is in the transcript', H.lines(transcript()))
    end,
  },
  {
    ':Switchman cancel stops the turn and keeps what was streamed',
    function()
      vim.cmd('Switchman cancel')
      H.wait_text(transcript(), '(cancelled)')
      wait_idle()
      local lines = H.lines(transcript())
      H.check(vim.tbl_contains(lines, 'Hel'), 'the partial answer stays', lines)
      H.fake('POST', '/_fake/release')
    end,
  },
  {
    'cancelling before the turn has an id sends $/cancelRequest; the turn still ends cancelled',
    function()
      H.script({ { kind = 'text', chunks = { 'x', 'y' }, fault = { kind = 'stall', after_chunks = 1 } } })
      type_and_send('cancel me at once')
      H.check(chat.turn and not chat.turn.turn_id, 'no routeDecided handled yet')
      vim.cmd('Switchman cancel')
      wait_idle()
      H.check(H.text(transcript()):find('## You\ncancel me at once\n\n## Switchman [sonnet · global default]\n', 1, true)
        and H.lines(transcript())[#H.lines(transcript()) - 1] == '(cancelled)', 'cancelled', H.lines(transcript()))
      H.fake('POST', '/_fake/reset') -- the reply may not have been asked for yet: drop it
    end,
  },
  {
    'a full answer streams in chunk by chunk, with newlines, and ends with model and cost',
    function()
      H.script({ { kind = 'text', chunks = { 'First line\nsec', 'ond line', '\nthird' } } })
      type_and_send('@sonnet hello there')
      H.wait_text(transcript(), 'third')
      wait_idle()
      local text = H.text(transcript())
      H.check(text:find('## You\n@sonnet hello there\n\n## Switchman [sonnet · override @sonnet]\nFirst line\nsecond line\nthird\n', 1, true),
        'the answer under its badge', H.lines(transcript()))
      local last = H.lines(transcript())[#H.lines(transcript())]
      H.check(last:match('^  sonnet · %$[%d.]+ · %d+ in / %d+ out tokens$'), 'a footer with model, cost, tokens', last)
    end,
  },
  {
    'tool activity shows as lines between the text',
    function()
      H.script({
        { kind = 'tool_call', text = { 'Let me read it.' }, tool_calls = { { name = 'read_file', id = 'toolu_1',
          input = { path = 'src/app.py' } } } },
        { kind = 'text', chunks = { 'It returns 42.' } },
      })
      type_and_send('what does main return?')
      H.wait_text(transcript(), 'It returns 42.')
      wait_idle()
      local text = H.text(transcript())
      H.check(text:find('Let me read it.\n  ⚙ read_file path=src/app.py\n  ✓ read_file: src/app.py: 2 lines\n', 1, true),
        'the tool call and its result', H.lines(transcript()))
      H.check(text:find('\nIt returns 42.\n', 1, true), 'text after a tool starts on its own line', H.lines(transcript()))
    end,
  },
  {
    'a chat drawn from the stored session shows each tool result as the live chat did',
    function()
      local outside = '../a-folder-beside-the-workspace/with-a-rather-long-file-name.txt'
      H.script({
        { kind = 'tool_call', tool_calls = {
          { name = 'list_files', id = 'toolu_list', input = { path = 'src' } },
          { name = 'grep', id = 'toolu_grep', input = { pattern = 'def main' } },
          { name = 'read_file', id = 'toolu_outside', input = { path = outside } },
        } },
        { kind = 'text', chunks = { 'Looked around.' } },
      })
      type_and_send('look around')
      H.wait_text(transcript(), 'Looked around.')
      wait_idle()
      local function results()
        return vim.tbl_filter(function(line)
          return vim.startswith(line, '  ✓ ') or vim.startswith(line, '  ✗ ')
        end, H.lines(transcript()))
      end
      local live = results()
      H.check(vim.tbl_contains(live, '  ✓ list_files: 1 file'), 'one file, not "1 files"', live)
      H.check(vim.tbl_contains(live, '  ✓ grep: 1 match in 1 file'), 'one match, not "1 matches in 1 files"', live)
      H.check(vim.startswith(live[#live], ("  ✗ read_file: '%s' is outside the workspace; only files under")
        :format(outside)), 'the refusal, cut (if at all) where the daemon cuts it', live)
      chat = H.reopen_chat(chat)
      H.wait_text(transcript(), 'Looked around.')
      H.eq(live, results(), 'the same lines once drawn from the stored session')
    end,
  },
  {
    "a failed turn shows the daemon's message plainly, after the retry notices",
    function()
      local error_step = { kind = 'error', status = 500, message = 'upstream exploded' }
      H.script({ error_step, error_step, error_step })
      type_and_send('hello again')
      H.wait_text(transcript(), '✗ anthropic:claude-sonnet-4-6: server error (500)')
      wait_idle()
      local text = H.text(transcript())
      H.check(text:find('> anthropic:claude-sonnet-4-6: server error (500)', 1, true), 'retry notices',
        H.lines(transcript()))
      H.check(text:find('send it again to retry', 1, true), 'the whole message', H.lines(transcript()))
      H.eq({ 'hello again' }, H.lines(chat.view.input), 'the message is back in the input, ready to send again')
    end,
  },
  {
    'an attachment the daemon refuses with the message is taken off, not attached again',
    function()
      local path = vim.env.SWITCHMAN_TEST_WORKSPACE .. '/notes.txt'
      vim.fn.writefile({ 'plain text' }, path)
      vim.cmd('Switchman add ' .. path)
      H.wait_for('the file attached (the daemon checks it first)', function()
        return chat.attachments ~= nil
      end)
      vim.fn.writefile({ 'PK\3\4', 'a\nb' }, path, 'b') -- a NUL: binary now, before it is sent
      type_and_send('what is in it?')
      H.wait_text(transcript(), 'notes.txt is a binary file')
      wait_idle()
      H.eq({ 'what is in it?' }, H.lines(chat.view.input), 'the message is back in the input')
      H.eq(nil, chat.attachments, 'the refused file is not attached again')
      H.wait_notification(nil, 'taken off the message')
      vim.fn.delete(path)
      chat.view:give_back('')
    end,
  },
  {
    'a JSON-RPC error (unknown @alias) is shown as the daemon wrote it',
    function()
      vim.cmd('Switchman add ' .. vim.env.SWITCHMAN_TEST_WORKSPACE .. '/src/app.py')
      H.wait_for('the file attached (the daemon checks it first)', function()
        return chat.attachments ~= nil
      end)
      type_and_send('@nope hi')
      H.wait_text(transcript(), "✗ Unknown model alias '@nope'. The message was not sent. Did you mean @opus?")
      wait_idle()
      H.eq({ '@nope hi' }, H.lines(chat.view.input), 'the refused message is back in the input')
      local attached = chat.attachments or {}
      H.check(#attached == 1 and vim.uri_to_fname(attached[1].uri):find('/src/app%.py$'),
        'what was attached to it goes with it again (it was dropped)', attached)
      chat.attachments = nil
    end,
  },
  {
    'a slash command answers in the chat without a model',
    function()
      type_and_send('/rules show')
      H.wait_text(transcript(), '## Switchman [/rules]')
      H.wait_text(transcript(), '1. fast for commits')
      wait_idle()
    end,
  },
  {
    'a mistyped slash command is named with the one meant, and no model is called',
    function()
      local _, before = H.fake('GET', '/_fake/requests')
      type_and_send('/modle opus')
      H.wait_text(transcript(), '## Switchman [/modle]')
      H.wait_text(transcript(), '✗ Unknown command /modle — did you mean /model?')
      wait_idle()
      H.eq({ '/modle opus' }, H.lines(chat.view.input), 'the mistyped command is back in the input')
      local _, after = H.fake('GET', '/_fake/requests')
      H.eq(#before.requests, #after.requests, 'no provider request')
    end,
  },
  {
    '<C-x><C-u> in the input completes @aliases, slash commands and profile names',
    function()
      vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.view.input)[1])
      H.feed('S@son<C-x><C-u><Esc>')
      H.eq({ '@sonnet' }, H.lines(chat.view.input))
      H.feed('S/rules ch<C-x><C-u><Esc>')
      H.eq({ '/rules check' }, H.lines(chat.view.input))
      H.feed('S/model hai<C-x><C-u><Esc>')
      H.eq({ '/model haiku' }, H.lines(chat.view.input))
      H.wait_for('the profile names', function()
        return require('switchman.profiles').cached(root)
      end)
      H.feed('S/profile sub<C-x><C-u><Esc>')
      H.eq({ '/profile subagent' }, H.lines(chat.view.input), 'the profile names (it completed none)')
      vim.api.nvim_buf_set_lines(chat.view.input, 0, -1, false, { '' })
    end,
  },
  {
    'the input shows where the draft would route, below it and wrapped to its window',
    function()
      local win = vim.fn.win_findbuf(chat.view.input)[1]
      vim.api.nvim_set_current_win(win)
      H.feed('Sreview the architecture of the auth service<Esc>')
      local expected = '→ [opus · rule: deep for architecture]'
      local preview = H.wait_for('the routing preview', function()
        local lines = chat.view:preview_lines()
        return table.concat(lines, ' '):find('opus', 1, true) and lines
      end)
      H.eq(expected, table.concat(preview, ' '), 'below the input, nothing cut off')
      vim.api.nvim_win_set_width(win, 20)
      chat.view:show_preview(chat.view.preview)
      local narrow = chat.view:preview_lines()
      H.check(#narrow > #preview, 'wrapped again in a narrower window', narrow)
      for _, line in ipairs(narrow) do
        H.check(vim.fn.strdisplaywidth(line) < 20, 'each line fits the window', narrow)
      end
      H.eq(expected, table.concat(narrow, ' '), 'nothing is cut off')
      vim.api.nvim_buf_set_lines(chat.view.input, 0, -1, false, { '' })
      H.wait_for('the placeholder again', function()
        return table.concat(chat.view:preview_lines(), ' '):find('Message Switchman', 1, true)
      end, nil, function()
        return chat.view:preview_lines()
      end)
    end,
  },
  {
    'q closes the chat; :Switchman chat brings the same conversation back',
    function()
      local before = H.lines(transcript())
      vim.api.nvim_set_current_win(vim.fn.win_findbuf(transcript())[1])
      H.feed('q')
      H.eq({}, vim.fn.win_findbuf(transcript()), 'the chat windows are closed')
      vim.cmd('Switchman chat')
      H.eq(before, H.lines(transcript()), 'the same transcript')
      H.check(vim.api.nvim_get_current_buf() == chat.view.input, 'the cursor is in the input again')
    end,
  },
  {
    "a new chat view (e.g. after restarting Neovim) shows the session's history",
    function()
      local old = { chat.view.transcript, chat.view.input }
      vim.cmd('only')
      for _, bufnr in ipairs(old) do
        vim.api.nvim_buf_delete(bufnr, { force = true })
      end
      vim.cmd('Switchman chat')
      chat = chat_module.get(root)
      H.check(chat.view.transcript ~= old[1], 'a new transcript buffer')
      H.wait_text(transcript(), 'It returns 42.')
      local text = H.text(transcript())
      H.check(text:find('## You\nwrite a commit message for the login fix\n\n## Switchman [haiku · rule: fast for commits]\nHel\n(cancelled)', 1, true),
        'the cancelled turn', H.lines(transcript()))
      H.check(text:find('## You\n@sonnet hello there\n\n## Switchman [sonnet · override @sonnet]\nFirst line\n', 1, true),
        'the message as typed, its @alias included', H.lines(transcript()))
      H.check(text:find('  ⚙ read_file path=src/app.py\n  ✓ read_file: src/app.py: 2 lines\n', 1, true), 'tool activity, as shown live',
        H.lines(transcript()))
      H.check(text:find('## You\nhello again\n\n## Switchman [sonnet · global default]\n✗ anthropic:claude-sonnet-4-6: server error (500)',
        1, true), 'the failed turn', H.lines(transcript()))
    end,
  },
  {
    'the daemon dying mid-turn is shown plainly; the next :Switchman chat starts it again',
    function()
      H.script({ { kind = 'text', chunks = { 'partial', 'never' }, fault = { kind = 'stall', after_chunks = 1 } } })
      type_and_send('this turn will not finish')
      H.wait_text(transcript(), 'partial')
      local pids = H.child_pids('switchman serve')
      H.eq(1, #pids, 'one daemon')
      H.notifications = {}
      vim.loop.kill(pids[1], 'sigkill')
      H.wait_text(transcript(), '✗ The Switchman daemon stopped during this turn; sending again starts it.')
      H.check(chat.turn == nil, 'the chat is free again')
      H.eq({ 'this turn will not finish' }, H.lines(chat.view.input), 'the message is back in the input')
      H.wait_notification(vim.log.levels.ERROR, 'Switchman: daemon for ')
      H.eq('', require('switchman').statusline(), 'no status without a daemon')
      H.fake('POST', '/_fake/release')
      vim.cmd('Switchman chat')
      type_and_send('are you back?')
      H.wait_text(transcript(), 'Echo: are you back?', 40000) -- a new daemon: the SDK is imported again
      wait_idle()
    end,
  },
  {
    ':Switchman restart during a turn says the restart stopped it, as the stored session does; the message comes back',
    function()
      H.script({ { kind = 'text', chunks = { 'begun', 'never' }, fault = { kind = 'stall', after_chunks = 1 } } })
      type_and_send('this turn meets a restart')
      H.wait_text(transcript(), 'begun')
      vim.cmd('Switchman restart')
      local stopped = '✗ Switchman stopped while this turn was running (the editor closed, reloaded or restarted it).'
      -- it said "(cancelled)", as if you had pressed Stop; and when the daemon's exit reached the
      -- editor before its answer, "The Switchman daemon stopped during this turn"
      H.wait_text(transcript(), 'begun\n' .. stopped)
      H.check(not H.text(transcript()):find('begun\n✗ The Switchman daemon stopped', 1, true), 'not as a crash',
        H.lines(transcript()))
      H.check(not H.text(transcript()):find('begun\n(cancelled)', 1, true), 'not as your Stop', H.lines(transcript()))
      H.eq({ 'this turn meets a restart' }, H.lines(chat.view.input), 'the message is back in the input, to send again')
      H.fake('POST', '/_fake/release')
      chat = H.reopen_chat(chat)
      H.wait_text(transcript(), stopped)
    end,
  },
  {
    "a restart's exit seen before the turn's answer waits for that answer (it said the daemon stopped)",
    function()
      H.script({ { kind = 'text', chunks = { 'early words', 'never' }, fault = { kind = 'stall', after_chunks = 1 } } })
      type_and_send('this turn is answered after the exit')
      H.wait_text(transcript(), 'early words')
      chat:daemon_stopped({ expected = true }) -- the exit of a daemon this Neovim stopped, read first
      H.check(chat.turn ~= nil, 'the turn still waits for its answer', H.lines(transcript()))
      vim.cmd('Switchman cancel') -- its answer comes after the exit
      H.wait_text(transcript(), 'early words\n(cancelled)')
      wait_idle()
      H.check(not H.text(transcript()):find('early words\n(cancelled)\n✗', 1, true), 'the answer is the outcome',
        H.lines(transcript()))
      H.fake('POST', '/_fake/release')
    end,
  },
  {
    "a rule whose name has a line break shows on the badge's one line (it raised 'String cannot contain newlines')",
    function()
      local routing = vim.env.SWITCHMAN_CONFIG_DIR .. '/routing.yaml'
      vim.fn.writefile({ 'rules:', '  - name: "line one\\nline two"', '    when: {message_matches: "badge-with-a-break"}',
        '    use: haiku' }, routing)
      type_and_send('a badge-with-a-break please')
      H.wait_text(transcript(), '## Switchman [haiku · rule: line one line two]')
      H.wait_text(transcript(), 'Echo: a badge-with-a-break please')
      wait_idle()
      vim.fn.delete(routing)
    end,
  },
  {
    'an answer with Windows line endings shows no ^M, live and in the chat drawn from the session',
    function()
      -- a model (or a proxy in front of it) that ends its lines with \r\n, one split between two chunks
      H.script({ { kind = 'text', chunks = { 'Step one\r', '\nStep two\r\n```sh\r\nmake\r\n```\r\n', 'Done.' } } })
      type_and_send('list the steps')
      H.wait_text(transcript(), 'Done.')
      wait_idle()
      local function answer()
        local lines = H.lines(transcript())
        local at = vim.fn.index(lines, 'list the steps') + 1
        return vim.list_slice(lines, at + 3, at + 8)
      end
      local want = { 'Step one', 'Step two', '```sh', 'make', '```', 'Done.' }
      H.eq(want, answer(), 'live')
      chat = H.reopen_chat(chat)
      H.wait_text(transcript(), 'Done.')
      H.eq(want, answer(), 'drawn from the session')
    end,
  },
  {
    'a chat window in another tab page follows the answer: back there, it shows the end (it showed an earlier part)',
    function()
      local lines = {}
      for i = 1, 60 do
        lines[i] = ('line %d of a long answer that wraps in the narrow window of the chat'):format(i)
      end
      H.script({ { kind = 'text', chunks = { 'It starts.\n', table.concat(lines, '\n') }, fault = { kind = 'stall', after_chunks = 1 } } })
      type_and_send('a long answer, please')
      H.wait_text(transcript(), 'It starts.')
      local win = vim.fn.win_findbuf(transcript())[1]
      vim.cmd('redraw')
      vim.cmd('tabnew') -- the user works elsewhere while it answers
      H.fake('POST', '/_fake/release')
      wait_idle()
      local last, top = vim.api.nvim_buf_line_count(transcript()), vim.fn.getwininfo(win)[1].topline
      H.eq(last, vim.api.nvim_win_get_cursor(win)[1], 'its cursor is at the end')
      -- (a user's Neovim draws the window as it was when they come back; a headless one corrects it)
      H.check(last - top < vim.api.nvim_win_get_height(win), 'its view followed: the end is in it',
        { last = last, topline = top, height = vim.api.nvim_win_get_height(win) })
      vim.cmd('tabprevious')
      vim.cmd('redraw')
      local info = vim.fn.getwininfo(win)[1]
      H.check(info.topline <= last and last <= info.botline, 'back there, the end is in view', { last = last,
        topline = info.topline, botline = info.botline })
      vim.cmd('tabnext')
      vim.cmd('tabclose')
    end,
  },
}
