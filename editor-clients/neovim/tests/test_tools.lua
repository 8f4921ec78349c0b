-- Tools that change the workspace: the diff in a split, vim.ui.select, edits in the buffer.
local H = require('harness')
local chat_module = require('switchman.chat')
local workspace = require('switchman.workspace')

local root = workspace.normalize(vim.env.SWITCHMAN_TEST_WORKSPACE)
local file = root .. '/src/tools_target.py'
local chat

local function send(message)
  H.send_chat(chat, message)
end

local function wait_idle()
  H.wait_turn(chat)
end

local function last_tool_result()
  local _, answer = H.fake('GET', '/_fake/requests')
  local body = answer.requests[#answer.requests].body
  local content = body.messages[#body.messages].content[1]
  return content
end

--- Record the messages given to vim.notify (still shown); returns them and what puts vim.notify back.
local function capture_notify()
  local notified = {}
  local notify = vim.notify
  vim.notify = function(message, ...)
    table.insert(notified, message)
    return notify(message, ...)
  end
  return notified, function()
    vim.notify = notify
  end
end

--- One turn whose model makes `call` ({ name, id, input }), allowed once, then answers `reply`.
local function allowed_call_turn(message, call, reply)
  H.fake('POST', '/_fake/reset')
  H.script({ { kind = 'tool_call', tool_calls = { call } }, { kind = 'text', chunks = { reply } } })
  H.stub_select(function(_, label)
    return label == 'Allow once'
  end)
  send(message)
  wait_idle()
end

--- Open the read-only transcript of `session_id` (as `:Switchman sessions` does), wait for `last` in it;
--- returns its lines and the index of the line `tool_line`.
local function transcript_tool_line(session_id, last, tool_line)
  require('switchman.sessions').open(root, session_id)
  H.wait_for('the transcript of ' .. session_id, function()
    return vim.api.nvim_buf_get_name(0) == 'switchman://session/' .. session_id
  end)
  local bufnr = vim.api.nvim_get_current_buf()
  H.wait_text(bufnr, last)
  local lines = H.lines(bufnr)
  local at = vim.fn.index(lines, tool_line) + 1
  H.check(at > 0, 'the tool line in the transcript', lines)
  return lines, at
end

--- Draw the chat anew from the stored session (what was shown live cleared first, so that what is
--- read after is the session's) and wait for `last` in it.
local function redraw_from_session(last)
  chat.view:clear()
  chat:reload(chat.session_id)
  H.wait_text(chat.view.transcript, last)
end

--- What the screen shows (its grid, as Neovim last drew it), one line per row.
local function screen_text()
  local rows = {}
  for row = 1, vim.o.lines do
    local cells = {}
    for col = 1, vim.o.columns do
      cells[col] = vim.fn.screenstring(row, col)
    end
    rows[row] = table.concat(cells)
  end
  return table.concat(rows, '\n')
end

local function edit_step()
  return {
    kind = 'tool_call',
    tool_calls = {
      { name = 'edit_file', id = 'toolu_edit', input = { path = 'src/tools_target.py', old_text = 'return 1', new_text = 'return 2' } },
    },
  }
end

local DISK_TARGET = root .. '/src/disk_target.py'

local function disk_edit_step(id)
  return { kind = 'tool_call', tool_calls = { { name = 'edit_file', id = id,
    input = { path = 'src/disk_target.py', old_text = 'return 1', new_text = 'return 2' } } } }
end

--- A turn of `steps` then `reply` whose edit is allowed while git changes its file on disk (every
--- question allowed; the edit's, not a delegation's, changes the file): the line after the one
--- `is_line` finds starts with `want` live, and is the same in the chat drawn from the session.
local function changed_on_disk_turn(message, steps, reply, is_line, want)
  vim.fn.writefile({ 'def g():', '    return 1' }, DISK_TARGET)
  H.fake('POST', '/_fake/reset')
  H.script(vim.list_extend(vim.deepcopy(steps), { { kind = 'text', chunks = { reply } } }))
  H.stub_select(function(item)
    return item == 'Allow once'
  end)
  local allow = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    if not opts.prompt:find('delegate', 1, true) then
      vim.fn.writefile({ '# changed by git', 'def g():', '    return 1' }, DISK_TARGET)
    end
    return allow(items, opts, on_choice)
  end
  send(message)
  wait_idle()
  H.eq({ '# changed by git', 'def g():', '    return 1' }, vim.fn.readfile(DISK_TARGET), 'the daemon left it alone')
  local function question()
    local lines = H.lines(chat.view.transcript)
    for i, line in ipairs(lines) do
      if is_line(line) then
        return lines[i + 1]
      end
    end
    return lines
  end
  local live = question()
  H.check(type(live) == 'string' and live:sub(1, #want) == want, 'live', live)
  redraw_from_session(reply)
  H.eq(live, question(), 'the same, drawn from the session')
end

return {
  {
    'an approved edit shows as a diff, then lands in the buffer, saved and undoable',
    function()
      vim.fn.mkdir(root .. '/src', 'p')
      vim.fn.writefile({ 'def f():', '    return 1' }, file)
      vim.cmd('Switchman chat')
      chat = H.check(chat_module.get(root), 'a chat for the workspace')
      H.fake('POST', '/_fake/reset')
      H.script({ edit_step(), { kind = 'text', chunks = { 'Changed it.' } } })
      local shown, on_screen = nil, nil
      local seen = H.stub_select(function(_, label)
        if label == 'Allow once' then
          -- the diff tab is open while the question is asked
          local names = {}
          for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
            table.insert(names, vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)))
            H.check(vim.wo[win].diff, 'both sides are in diff mode')
          end
          shown = names
          on_screen = screen_text():find('def f():', 1, true) ~= nil
          return true
        end
      end)
      send('make f return 2')
      wait_idle()
      H.eq({ 'Allow once', 'Always allow edit_file in this workspace', 'Deny' }, seen, 'the three answers')
      H.check(shown and #shown == 2 and shown[1]:find('/current/src/tools_target.py', 1, true)
        and shown[2]:find('/proposed/src/tools_target.py', 1, true), 'current and proposed side by side', shown)
      H.check(on_screen, 'drawn before the question: the screen showed the chat, the diff hidden behind the prompt')
      local buf = vim.fn.bufnr(file)
      H.check(buf > 0, 'the file has a buffer')
      H.eq({ 'def f():', '    return 2' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'the edit is in the buffer')
      H.eq(false, vim.bo[buf].modified, 'and saved')
      H.eq({ 'def f():', '    return 2' }, vim.fn.readfile(file), 'the disk has it too')
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent undo')
      end)
      H.eq({ 'def f():', '    return 1' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'undo takes it back')
      H.eq(true, vim.bo[buf].modified, 'in the buffer (unsaved)')
      H.eq(false, last_tool_result().is_error, 'the model was told it worked')
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent write') -- the disk as the next tests expect it
      end)
    end,
  },
  {
    'a denial with a reason reaches the model and changes nothing',
    function()
      H.fake('POST', '/_fake/reset')
      H.script({ edit_step(), { kind = 'text', chunks = { 'Left it.' } } })
      H.stub_select(function(_, label)
        return label == 'Deny'
      end)
      vim.ui.input = function(_, on_confirm)
        on_confirm('one is the right answer')
      end
      send('make f return 2 again')
      wait_idle()
      local result = last_tool_result()
      H.eq(true, result.is_error, 'an error result')
      H.check(vim.inspect(result.content):find('one is the right answer', 1, true), 'with the reason', result)
      local buf = vim.fn.bufnr(file)
      H.eq({ 'def f():', '    return 1' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'nothing changed')
      H.eq(1, #vim.api.nvim_list_tabpages(), 'the diff tab was closed')
    end,
  },
  {
    'an error shown while the question waits ends the prompt with it: the question is asked again',
    function()
      -- vim.ui.select's default prompt (inputlist) ends with an error when an error message is shown
      -- while it waits (another plugin's, or a daemon's exit notice): the handler failed with it,
      -- LSP reported SERVER_REQUEST_HANDLER_ERROR and the diff tab stayed open
      H.fake('POST', '/_fake/reset')
      H.script({ edit_step(), { kind = 'text', chunks = { 'Left it again.' } } })
      local asked = 0
      H.stub_select(function(item)
        return item == 'Deny'
      end)
      local deny = vim.ui.select
      vim.ui.select = function(items, opts, on_choice)
        asked = asked + 1
        if asked == 1 then
          error('Vim:E5108: Error executing lua: another plugin failed', 0)
        end
        return deny(items, opts, on_choice)
      end
      vim.ui.input = function(_, on_confirm)
        on_confirm('not this time')
      end
      send('make f return 3')
      wait_idle()
      H.eq(2, asked, 'the question was asked again')
      local result = last_tool_result()
      H.check(vim.inspect(result.content):find('not this time', 1, true), 'the answer reached the model', result)
      H.eq(1, #vim.api.nvim_list_tabpages(), 'the diff tab was closed')
    end,
  },
  {
    'an approved new file in folders that do not exist yet is created with them, holding exactly its text',
    function()
      allowed_call_turn('write a guide', { name = 'create_file', id = 'toolu_create',
        input = { path = 'docs/new/guide.md', content = '# Guide\n' } }, 'Created it.')
      H.check(H.text(chat.view.transcript):find('✓ create_file: created docs/new/guide.md', 1, true),
        'the tool line says it was created', H.lines(chat.view.transcript))
      -- exactly the text: one line break at the end (0.10+ wrote two, the buffer's empty last line)
      H.eq({ '# Guide', '' }, vim.fn.readfile(root .. '/docs/new/guide.md', 'b'), 'on the disk, saved')
      H.eq(false, last_tool_result().is_error, 'the model was told it worked')
      vim.fn.delete(root .. '/docs', 'rf')
    end,
  },
  {
    'a file whose buffer has unsaved changes is not deleted (Neovim would drop them with the buffer)',
    function()
      local doomed = root .. '/src/doomed.py'
      vim.fn.writefile({ 'on disk' }, doomed)
      vim.cmd('tabnew ' .. vim.fn.fnameescape(doomed))
      local buf = vim.api.nvim_get_current_buf()
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'my unsaved work' })
      vim.cmd('tabprevious')
      allowed_call_turn('delete doomed.py',
        { name = 'delete_file', id = 'toolu_doomed', input = { path = 'src/doomed.py' } }, 'Tried.')
      H.check(H.text(chat.view.transcript):find('unsaved changes in the editor, which deleting it would throw away', 1, true),
        'the tool line says why', H.lines(chat.view.transcript))
      H.eq({ 'my unsaved work' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'the buffer keeps its text')
      H.eq({ 'on disk' }, vim.fn.readfile(doomed), 'the file is still there')
      H.eq(true, last_tool_result().is_error, 'the model was told it was not deleted')
      vim.cmd('bwipeout! ' .. buf)
      vim.fn.delete(doomed)
    end,
  },
  {
    'an approved edit is not applied when the buffer changed since it was proposed (it would garble the file)',
    function()
      -- (unsaved changes made before the question are the edit's base: the daemon is sent the buffer,
      -- see test_buffers.lua)
      local buf = vim.fn.bufnr(file)
      local notified, stop_capture = capture_notify()
      H.fake('POST', '/_fake/reset')
      H.script({ edit_step(), { kind = 'text', chunks = { 'Will read it again.' } } })
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'def f():', '    return 1' })
      H.stub_select(function(_, label)
        if label == 'Allow once' then
          vim.api.nvim_buf_set_lines(buf, 0, 0, false, { '# typed meanwhile' })
        end
        return label == 'Allow once'
      end)
      send('make f return 2 (typed while asked)')
      wait_idle()
      H.eq({ '# typed meanwhile', 'def f():', '    return 1' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false),
        'the buffer is left as the user made it, not garbled')
      H.eq({ 'def f():', '    return 1' }, vim.fn.readfile(file), 'the disk is unchanged')
      local result = last_tool_result()
      H.eq(true, result.is_error, 'the model is told it was not applied')
      H.check(vim.inspect(result.content):find('changed in the editor', 1, true)
        and vim.inspect(result.content):lower():find('read the file again', 1, true), 'and why', result)
      H.check(notified[#notified] and notified[#notified]:find('not applied', 1, true), 'the user is told', notified)
      -- without the advice meant for the model: the user has nothing to read again (as VS Code's card)
      H.check(notified[#notified]:find('so nothing was changed.', 1, true)
        and not notified[#notified]:lower():find('read the file again', 1, true), 'no advice for the model', notified)
      H.eq(1, #vim.api.nvim_list_tabpages(), 'the diff tab was closed')
      stop_capture()
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'def f():', '    return 1' })
    end,
  },
  {
    ":'<,'>Switchman send attaches the selected lines (unsaved text included) to the next message",
    function()
      H.fake('POST', '/_fake/reset')
      H.script({ { kind = 'text', chunks = { 'It returns one.' } } })
      local buf = vim.fn.bufnr(file)
      vim.api.nvim_buf_set_lines(buf, 1, 2, false, { '    return 1  # unsaved note' })
      for _, win in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_win_get_buf(win) ~= buf and vim.api.nvim_win_get_buf(win) ~= chat.view.input
          and vim.api.nvim_win_get_buf(win) ~= chat.view.transcript then
          vim.api.nvim_win_set_buf(win, buf)
          vim.api.nvim_set_current_win(win)
          break
        end
      end
      H.eq(buf, vim.api.nvim_get_current_buf(), 'the file is the current buffer')
      vim.cmd('2,2Switchman send what does this line do?')
      wait_idle()
      local _, answer = H.fake('GET', '/_fake/requests')
      local sent = vim.inspect(answer.requests[#answer.requests].body.messages)
      H.check(sent:find('Attached selection src/tools_target.py (lines 2-2)', 1, true), 'the selection was attached', sent)
      H.check(sent:find('# unsaved note', 1, true), 'with the unsaved text', sent)
      H.check(H.text(chat.view.transcript):find('📎 src/tools_target.py (lines 2-2)', 1, true),
        'the transcript shows the attachment', H.lines(chat.view.transcript))
    end,
  },
  {
    ':Switchman send from a buffer with no file sends its text in the message, or puts it in the input',
    function()
      H.fake('POST', '/_fake/reset')
      H.script({ { kind = 'text', chunks = { 'Two assignments.' } } })
      local scratch = vim.api.nvim_create_buf(true, true) -- pasted text, no name: it was refused
      vim.api.nvim_buf_set_lines(scratch, 0, -1, false, { 'x = 1', 'y = 2' })
      vim.api.nvim_buf_set_option(scratch, 'filetype', 'python')
      local shown = vim.fn.bufnr(file) -- its window, from the test before
      local win = H.check(vim.fn.win_findbuf(shown)[1], 'the window of the file')
      vim.api.nvim_win_set_buf(win, scratch)
      vim.api.nvim_set_current_win(win)
      vim.cmd('Switchman send what is this?')
      wait_idle()
      local _, answer = H.fake('GET', '/_fake/requests')
      local sent = vim.inspect(answer.requests[#answer.requests].body.messages)
      H.check(sent:find('what is this?\\n\\n```python\\nx = 1\\ny = 2\\n```', 1, true), 'sent in the message', sent)
      H.eq(nil, chat.attachments, 'nothing attached')
      vim.api.nvim_set_current_win(win)
      vim.cmd('2,2Switchman send') -- without a message: in the input, to write the question with
      H.eq({ '```python', 'y = 2', '```' }, vim.api.nvim_buf_get_lines(chat.view.input, 0, -1, false), 'in the input')
      vim.api.nvim_buf_set_lines(chat.view.input, 0, -1, false, {})
      vim.api.nvim_win_set_buf(win, shown)
      vim.api.nvim_buf_delete(scratch, { force = true })
    end,
  },
  {
    ':Switchman add refuses a binary file at once, with the daemon\'s reason; a text file is attached',
    function()
      local blob = root .. '/blob.bin'
      local out = assert(io.open(blob, 'wb'))
      out:write('PK\3\4\0\0 bytes\n')
      out:close()
      local function refused(how)
        local before = #H.notifications
        vim.cmd('Switchman add ' .. blob)
        H.wait_for('the refusal (' .. how .. ')', function()
          local last = H.notifications[#H.notifications]
          return #H.notifications > before
            and last.message:find('not attached: blob.bin is a binary file; only text files can be attached.', 1, true)
        end, nil, H.notifications)
        H.eq(nil, chat.attachments, 'nothing is attached (' .. how .. ')')
      end
      refused('read by the daemon')
      local blob_buf = vim.fn.bufadd(blob)
      vim.fn.bufload(blob_buf)
      refused('its buffer\'s text, NUL bytes and all')
      vim.api.nvim_buf_delete(blob_buf, { force = true })
      vim.cmd('Switchman add ' .. file)
      H.wait_for('the text file attached', function()
        return chat.attachments ~= nil and #chat.attachments == 1
      end, nil, H.notifications)
      H.eq(vim.uri_from_fname(file), chat.attachments[1].uri, 'the file named')
      -- the same file again (or its whole buffer, :Switchman send): once, with its latest text; it
      -- went twice, and the model was sent it twice
      local attached = #H.notifications
      vim.cmd('Switchman add ' .. file)
      H.wait_for('the second add answered', function()
        return #H.notifications > attached
      end, nil, H.notifications)
      H.eq(1, #chat.attachments, 'one attachment of the file', chat.attachments)
      H.check(H.notifications[#H.notifications].message:find('already attached: it goes once', 1, true),
        'and says so', H.notifications)
      chat.attachments = nil
      os.remove(blob)
      -- a name with spaces, as completion puts it on the command line (unescaped): one file, not
      -- its first word ("cannot attach \"src/my\": no such file")
      local spaced = root .. '/src/my notes.txt'
      vim.fn.writefile({ 'notes' }, spaced)
      vim.cmd('Switchman add src/my notes.txt')
      H.wait_for('the file with spaces attached', function()
        return chat.attachments ~= nil and #chat.attachments == 1
      end, nil, function()
        return H.notifications
      end)
      H.eq(vim.uri_from_fname(spaced), chat.attachments[1].uri, 'the whole name')
      chat.attachments = nil
      os.remove(spaced)
      -- a folder is said to be one: it said "no such file" of a folder that is there
      H.notifications = {}
      vim.cmd('Switchman add src')
      H.wait_notification(vim.log.levels.WARN, 'cannot attach "src": it is a folder; attach its files one at a time')
      H.eq(nil, chat.attachments, 'nothing attached')
    end,
  },
  {
    ':Switchman send and add in the chat itself attach nothing and say why (its draft is not a file)',
    function()
      local input_win = vim.fn.win_findbuf(chat.view.input)[1]
      vim.api.nvim_set_current_win(input_win)
      vim.api.nvim_buf_set_lines(chat.view.input, 0, -1, false, { 'my draft' })
      for _, command in ipairs({ 'Switchman send', 'Switchman add', '1,1Switchman send quote this' }) do
        local before = #H.notifications
        vim.cmd(command)
        local last = H.notifications[#H.notifications]
        H.check(#H.notifications > before and last.message:find("the chat's own buffers are not attached", 1, true),
          command .. ': told why', H.notifications)
        H.eq(nil, chat.attachments, command .. ': nothing is attached')
      end
      H.eq({ 'my draft' }, vim.api.nvim_buf_get_lines(chat.view.input, 0, -1, false), 'the draft is left as it was')
      vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.view.transcript)[1])
      local before = #H.notifications
      vim.cmd('1,1Switchman send')
      H.check(#H.notifications > before, 'the transcript is not attached either', H.notifications)
      H.eq(nil, chat.attachments, 'nothing is attached from the transcript')
      vim.api.nvim_buf_set_lines(chat.view.input, 0, -1, false, {})
    end,
  },
  {
    'ga applies the code block under the cursor to the selected lines, through the approval',
    function()
      H.fake('POST', '/_fake/reset')
      H.script({ { kind = 'text', chunks = { 'Better:\n\n```python\n    return 3\n```\n' } } })
      send('show me a better f')
      wait_idle()
      local buf = vim.fn.bufnr(file)
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'def f():', '    return 1', '# end' })
      vim.api.nvim_buf_set_mark(buf, '<', 2, 0, {})
      vim.api.nvim_buf_set_mark(buf, '>', 2, 0, {})
      local code_win = vim.fn.win_findbuf(buf)[1]
      H.check(code_win, 'the file is in a window')
      vim.api.nvim_set_current_win(code_win)
      local transcript_win = vim.fn.win_findbuf(chat.view.transcript)[1]
      vim.api.nvim_set_current_win(transcript_win) -- the code window is now the previous one
      local row = nil
      for i, line in ipairs(H.lines(chat.view.transcript)) do
        if line == '    return 3' then
          row = i
        end
      end
      H.check(row, 'the code block is in the transcript', H.lines(chat.view.transcript))
      vim.api.nvim_win_set_cursor(transcript_win, { row, 0 })
      local prompts = {}
      local seen = H.stub_select(function(_, label)
        return label == 'Allow once'
      end)
      local select = vim.ui.select
      vim.ui.select = function(items, opts, on_choice)
        table.insert(prompts, opts.prompt)
        return select(items, opts, on_choice)
      end
      H.feed('ga')
      H.wait_for('the code in the buffer', function()
        return vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1] == '    return 3'
      end, 30000, function()
        return { vim.api.nvim_buf_get_lines(buf, 0, -1, false), prompts }
      end)
      H.eq({ 'def f():', '    return 3', '# end' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false),
        'only the selected line was replaced')
      H.eq('Switchman: Apply the code block to src/tools_target.py (replacing the selection)', prompts[1],
        'the daemon asked, like for an edit')
      H.eq('Always allow apply_code in this workspace', seen[2], 'with its own trust')
      H.eq(true, vim.bo[buf].modified, 'unsaved: the buffer had unsaved changes, which are not written for the user')
      H.wait_for('the outcome, as it is', function()
        return vim.tbl_contains(vim.tbl_map(function(n)
          return n.message
        end, H.notifications), 'Switchman: applied to src/tools_target.py, not saved: the buffer had unsaved changes'
          .. ' (:w saves it; u undoes it)')
      end, nil, function()
        return H.notifications -- it said "applied to src/tools_target.py and saved"
      end)
      H.eq(1, #vim.api.nvim_list_tabpages(), 'the diff tab was closed')
      -- the question and its answer, live, at the end of the answer whose code block it applied
      local asked = '    ? Apply the code block to src/tools_target.py (replacing the selection) — Allowed once.'
      H.wait_text(chat.view.transcript, asked)
      local text = H.text(chat.view.transcript)
      H.check(text:find('    return 3\n```\n\n' .. vim.pesc(asked) .. '\n      │ %-%-%- a/src/tools_target%.py\n'
        .. '      │ %+%+%+ b/src/tools_target%.py\n      │ @@ [^\n]*\n      │  def f%(%):\n      │ %-    return 1\n'
        .. '      │ %+    return 3\n      │  # end\n  sonnet · [^\n]*$'),
        'above the footer of its turn, with the diff it showed', H.lines(chat.view.transcript))
    end,
  },
  {
    'a write-capable delegation asks first, showing its tier, task and worker tools',
    function()
      H.fake('POST', '/_fake/reset')
      H.script({
        { kind = 'tool_call', name = 'delegate', id = 'toolu_tools_delegate',
          input = { tier = 'fast', task = 'Rename f to g\nin every file', context = { mode = 'minimal' },
                    allowed_tools = { 'read_file', 'edit_file' } } },
        { kind = 'text', chunks = { 'Not delegated.' } },
      })
      local prompt, shown = nil, nil
      vim.ui.select = function(items, opts, on_choice)
        prompt = opts.prompt
        shown = vim.api.nvim_buf_get_lines(0, 0, -1, false)
        local deny = nil
        for i, item in ipairs(items) do
          if item == 'Deny' then
            deny = i
          end
        end
        on_choice(items[deny], deny)
      end
      vim.ui.input = function(_, on_confirm)
        on_confirm('not now')
      end
      send('rename f everywhere, with a worker')
      wait_idle()
      H.eq('Switchman wants to delegate to a fast worker on haiku with edit_file: Rename f to g', prompt,
        'the question, with the model the worker would run on')
      H.eq({ 'Delegate to a worker on the fast tier, running haiku.', 'The worker may use: edit_file', '', 'Task:', 'Rename f to g',
        'in every file' }, shown, 'the whole task in a tab while asking')
      H.check(vim.inspect(last_tool_result().content):find('not now', 1, true), 'the planner saw the reason',
        last_tool_result())
      H.eq(1, #vim.api.nvim_list_tabpages(), 'the tab was closed')
    end,
  },
  {
    'a question the daemon withdraws (its turn was cancelled) goes away with its diff tab',
    function()
      -- the buffer (the edit's base: the daemon is sent it) has the text the edit replaces
      vim.api.nvim_buf_set_lines(vim.fn.bufnr(file), 0, -1, false, { 'def f():', '    return 1' })
      H.fake('POST', '/_fake/reset')
      H.script({ edit_step(), { kind = 'text', chunks = { 'Unused.' } } })
      local approval = require('switchman.approval')
      local wait_ms = approval.wait_ms
      approval.wait_ms = 30000 -- without the withdrawal the question would stay this long
      local on_choice = nil
      local notified, stop_capture = capture_notify()
      -- an asynchronous picker (telescope, fzf-lua, dressing.nvim): it returns at once and the
      -- user has not chosen yet when the turn is cancelled
      vim.ui.select = function(_, _, choose)
        on_choice = choose
        vim.schedule(function()
          chat:cancel()
        end)
      end
      local before = vim.api.nvim_buf_get_lines(vim.fn.bufnr(file), 0, -1, false)
      local started = vim.loop.now()
      send('make f return 2, then I change my mind')
      wait_idle()
      local waited = vim.loop.now() - started
      stop_capture()
      approval.wait_ms = wait_ms
      H.check(on_choice, 'the question was asked')
      H.check(waited < 25000, ('the question went away when withdrawn (after %d ms)'):format(waited))
      H.eq(1, #vim.api.nvim_list_tabpages(), 'the diff tab was closed')
      H.check(vim.tbl_contains(vim.tbl_map(function(m)
        return m:find('no longer needs this answer', 1, true) ~= nil
      end, notified), true), 'the user is told why it went away', notified)
      local asked_reason = false
      vim.ui.input = function()
        asked_reason = true
      end
      on_choice('Deny', 3) -- the picker answered late: ignored, no reason asked for
      H.eq(false, asked_reason, 'no reason is asked for a withdrawn question')
      H.eq(before, vim.api.nvim_buf_get_lines(vim.fn.bufnr(file), 0, -1, false), 'nothing changed')
    end,
  },
  {
    "a new chat view (e.g. after restarting Neovim) shows each turn's answered questions under their tool lines",
    function()
      -- each tool call's question line, under its tool line (the same line live and rebuilt: the result
      -- keeps its summary);
      -- (the question the stop cut short too: its call's result comes live with it); ga's Apply's
      -- line is at the end of the answer whose code block it applied, above its footer
      local function questions(text)
        local found = {}
        for line in text:gmatch('\n  [^\n ]+ [^\n]*\n(    %? [^\n]*)') do
          table.insert(found, line)
        end
        return found
      end
      local function applied(text)
        return text:match('```\n\n(    %? Apply .-)\n  sonnet · ') -- its line and its diff
      end
      local live = questions(H.text(chat.view.transcript))
      local live_apply = applied(H.text(chat.view.transcript))
      -- a delegation's start question, asked before its worker would start: above the worker's line live too
      -- (it names its task, as VS Code's card does)
      H.check(H.text(chat.view.transcript):find('\n    %? Delegate to a fast worker that may change files: '
        .. 'Rename f to g in every file — Denied: not now\n'
        .. '      worker on fast tier · haiku · may use edit_file\n  ✗ worker fast · [^\n]*\n  ✗ delegate: approval_denied\n'),
        "live: the delegation's question above its worker's line", H.lines(chat.view.transcript))
      chat = H.reopen_chat(chat) -- the code window stays
      H.wait_text(chat.view.transcript, 'Not delegated.')
      local text = H.text(chat.view.transcript)
      H.eq(8, #live, 'a line live under each tool call that asked', H.lines(chat.view.transcript))
      H.eq(questions(text), live, 'the same lines as the rebuilt chat')
      H.check(live_apply, "ga's line live", H.lines(chat.view.transcript))
      H.eq(applied(text), live_apply, "ga's line as the rebuilt chat shows it")
      local function shows(expected, what)
        H.check(text:find(expected, 1, true), what, H.lines(chat.view.transcript))
      end
      shows('## You\nmake f return 2\n\n## Switchman [', 'the first turn')
      H.check(text:find('\n  ✓ edit_file: [^\n]*\n    %? Edit src/tools_target%.py — Allowed once%.\n'),
        'allowed once, under its tool line', H.lines(chat.view.transcript))
      shows('    ? Edit src/tools_target.py — Denied: one is the right answer\n', 'denied, with the reason')
      shows('    ? Create docs/new/guide.md — Allowed once.\n', 'a new file')
      shows('    ? Edit src/tools_target.py — Not applied: src/tools_target.py changed in the editor since', 'not applied, and why')
      shows('```\n\n    ? Apply the code block to src/tools_target.py (replacing the selection) — Allowed once.\n'
        .. '      │ --- a/src/tools_target.py\n',
        "ga's question, at the end of the turn whose code block it applied")
      -- asked before its worker would have started: above the worker's line, then the call's result
      shows('    ? Delegate to a fast worker that may change files: Rename f to g in every file — Denied: not now\n'
        .. '      worker on fast tier · haiku · may use edit_file\n  ✗ worker fast · ',
        "a delegation's start, with the worker's tier, model and tools, above its worker's line")
      H.check(text:find('\n  ✗ worker fast · [^\n]*\n  ✗ delegate: approval_denied\n'), "then the call's result",
        H.lines(chat.view.transcript))
      -- the first edit's diff under its question, as the question showed it (the live chat has it too)
      H.check(text:find('\n    %? Edit src/tools_target%.py — Allowed once%.\n      │ %-%-%- a/src/tools_target%.py\n'
        .. '      │ %+%+%+ b/src/tools_target%.py\n      │ @@ [^\n]*\n      │  def f%(%):\n'
        .. '      │ %-    return 1\n      │ %+    return 2\n'), "the edit's diff under its question",
        H.lines(chat.view.transcript))
      shows('  ✗ edit_file: stopped\n    ? Edit src/tools_target.py — Not answered: the turn was stopped; nothing happened.\n',
        'the question the stop cut short')
      local _, count = text:gsub('\n    %? ', '')
      H.eq(9, count, 'one line a question (the delete too), none for the reads', H.lines(chat.view.transcript))
    end,
  },
  {
    'two questions at once: answering the first lets its worker start while the second waits (0.10+)',
    function()
      H.fake('POST', '/_fake/reset')
      local function delegation(id, task)
        return { name = 'delegate', id = id, input = { tier = 'fast', task = task, context = { mode = 'minimal' },
          allowed_tools = { 'read_file', 'edit_file' } } }
      end
      H.script({
        { kind = 'tool_call', tool_calls = { delegation('toolu_two_a', 'first task'), delegation('toolu_two_b', 'second task') } },
        { kind = 'text', chunks = { 'worker one' } }, { kind = 'text', chunks = { 'worker two' } },
        { kind = 'text', chunks = { 'Both done.' } },
      })
      local questions, started, seen = {}, {}, nil
      require('switchman.client').on('switchman/delegation', function(_, update)
        if update.phase == 'started' then
          started[update.tool_use_id] = true
        end
      end)
      -- an asynchronous picker; the answers come from timers, as a user's would, because the
      -- test's own code waits below the handlers while they wait
      vim.ui.select = function(items, _, on_choice)
        table.insert(questions, on_choice)
        if #questions == 2 then
          vim.defer_fn(function()
            questions[1](items[1], 1)
            local wait = vim.loop.new_timer()
            local deadline = vim.loop.now() + 3000
            local answered = false -- ticks scheduled before the stop still run: answer once
            wait:start(20, 20, vim.schedule_wrap(function()
              if not answered and (next(started) or vim.loop.now() > deadline) then
                answered = true
                wait:stop()
                wait:close()
                seen = vim.tbl_keys(started)
                questions[2](items[1], 1)
              end
            end))
          end, 100)
        end
      end
      send('delegate both tasks')
      wait_idle()
      H.check(seen, 'both questions were asked and answered')
      if vim.fn.has('nvim-0.10') == 1 then
        H.eq({ 'toolu_two_a' }, seen, 'the first worker started before the second question was answered')
      end
      H.check(H.text(chat.view.transcript):find('Both done.', 1, true), 'the turn finished', H.lines(chat.view.transcript))
      H.eq(1, #vim.api.nvim_list_tabpages(), 'both tabs were closed')
      -- each delegation's start question right above its own worker's line, live as rebuilt (live, the
      -- second question went above the first worker's line: both questions, then both workers)
      local function order()
        local out, lines = {}, H.lines(chat.view.transcript)
        local from = 1
        for i, line in ipairs(lines) do
          from = line == 'delegate both tasks' and i or from
        end
        for _, line in ipairs(vim.list_slice(lines, from)) do
          local task = line:match('^  ✓ worker .* — (%a+) task$')
          if line:find('^    %? Delegate to a fast worker') then
            table.insert(out, 'question')
          elseif task then
            table.insert(out, task)
          end
        end
        return out
      end
      local want = { 'question', 'first', 'question', 'second' }
      H.eq(want, order(), 'live', H.lines(chat.view.transcript))
      chat = H.reopen_chat(chat)
      H.wait_text(chat.view.transcript, 'Both done.')
      H.eq(want, order(), 'rebuilt from the session', H.lines(chat.view.transcript))
    end,
  },
  {
    ':Switchman trust lists what is always allowed and revokes the pick',
    function()
      local buf = vim.fn.bufnr(file)
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'def f():', '    return 1', '# end' })
      vim.api.nvim_buf_set_mark(buf, '<', 2, 0, {})
      vim.api.nvim_buf_set_mark(buf, '>', 2, 0, {})
      local code_win = vim.fn.win_findbuf(buf)[1]
      vim.api.nvim_set_current_win(code_win)
      local transcript_win = vim.fn.win_findbuf(chat.view.transcript)[1]
      vim.api.nvim_set_current_win(transcript_win)
      for i, line in ipairs(H.lines(chat.view.transcript)) do
        if line == '    return 3' then
          vim.api.nvim_win_set_cursor(transcript_win, { i, 0 })
        end
      end
      H.stub_select(function(_, label)
        return vim.startswith(label, 'Always allow')
      end)
      H.feed('ga')
      H.wait_for('the code applied', function()
        return vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1] == '    return 3'
      end, 30000)
      local client = require('switchman.client')
      local _, trusted = client.request_sync(root, 'switchman/trust', { workspace = vim.uri_from_fname(root) })
      H.eq({ 'apply_code' }, trusted.trusted[1].tools, '"always" was remembered')
      vim.api.nvim_set_current_win(code_win)
      local seen = H.stub_select(function(item)
        return item.tool == 'apply_code'
      end)
      vim.cmd('Switchman trust')
      H.wait_for('the trust revoked', function()
        local _, now = client.request_sync(root, 'switchman/trust', { workspace = vim.uri_from_fname(root) })
        return #now.trusted == 0 or #now.trusted[1].tools == 0
      end, 30000)
      H.eq({ 'Revoke apply_code (runs without asking)' }, seen, 'the list')
    end,
  },
  {
    'always-allowed edits: two to one file and one to a file not open all land and are saved; u undoes the last',
    function()
      local buf = vim.fn.bufnr(file)
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'def f():', '    return 1' })
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent write')
      end)
      local other = root .. '/src/not_open.py'
      vim.fn.writefile({ 'x = 1' }, other)
      H.eq(-1, vim.fn.bufnr(other), 'the other file is not open')
      H.fake('POST', '/_fake/reset')
      local function edit(id, path, old_text, new_text)
        return { kind = 'tool_call', name = 'edit_file', id = id,
          input = { path = path, old_text = old_text, new_text = new_text } }
      end
      H.script({
        edit('toolu_save_1', 'src/tools_target.py', 'return 1', 'return 2'),
        edit('toolu_save_2', 'src/tools_target.py', 'def f', 'def g'),
        edit('toolu_save_3', 'src/not_open.py', 'x = 1', 'x = 2'),
        { kind = 'text', chunks = { 'All three.' } },
      })
      local _, asked = H.stub_select(function(_, label)
        return vim.startswith(label, 'Always allow')
      end)
      send('make f g returning 2, and x 2')
      wait_idle()
      H.eq(1, #asked, 'asked once (the first edit), then always allowed', asked)
      local _, answer = H.fake('GET', '/_fake/requests')
      for i = 2, 4 do
        local messages = answer.requests[i].body.messages
        local result = messages[#messages].content[1]
        H.eq(false, result.is_error, ('edit %d landed'):format(i - 1), result)
      end
      H.eq({ 'def g():', '    return 2' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'both edits in the buffer')
      H.eq({ 'def g():', '    return 2' }, vim.fn.readfile(file), 'and on disk')
      H.eq(false, vim.bo[buf].modified, 'saved')
      H.eq({ 'x = 2' }, vim.fn.readfile(other), 'the file that was not open was edited and saved')
      H.eq(false, vim.bo[vim.fn.bufnr(other)].modified, 'its buffer is saved too')
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent undo')
      end)
      H.eq({ 'def f():', '    return 2' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'u takes back the last edit')
      H.eq(true, vim.bo[buf].modified, 'in the buffer only')
      H.eq({ 'def g():', '    return 2' }, vim.fn.readfile(file), 'the disk keeps both until written')
    end,
  },
  {
    'an edit the buffer cannot be written after is in the buffer, and the model is told it is not saved',
    function()
      local buf = vim.fn.bufnr(file)
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent edit!') -- the disk's text again (edit_file is still always allowed)
      end)
      vim.bo[buf].readonly = true
      H.fake('POST', '/_fake/reset')
      H.script({
        { kind = 'tool_call', name = 'edit_file', id = 'toolu_readonly',
          input = { path = 'src/tools_target.py', old_text = 'return 2', new_text = 'return 3' } },
        { kind = 'text', chunks = { 'Changed, not saved.' } },
      })
      send('make f return 3')
      wait_idle()
      vim.bo[buf].readonly = false
      H.eq({ 'def g():', '    return 2' }, vim.fn.readfile(file), 'the disk is unchanged')
      H.eq({ 'def g():', '    return 3' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'the change is in the buffer')
      H.eq(true, vim.bo[buf].modified, 'only')
      local result = last_tool_result()
      H.eq(false, result.is_error, 'it was applied')
      H.check(vim.inspect(result.content):find('was not saved: src/tools_target.py', 1, true)
        and vim.inspect(result.content):find('E45', 1, true), 'and the model is told it is not saved, and why', result)
      -- (0.7's error from nvim_buf_call carried "Error executing lua", the plugin's paths and a traceback)
      for _, leak in ipairs({ 'Error executing lua', 'stack traceback', 'edits.lua', 'Vim(write)' }) do
        H.check(not vim.inspect(result.content):find(leak, 1, true), 'no Lua error text: ' .. leak, result)
      end
    end,
  },
  {
    'an always-allowed edit of a buffer whose unsaved text is not the disk\'s is made from that text, left unsaved',
    function()
      local buf = vim.fn.bufnr(file)
      H.eq(true, vim.bo[buf].modified, 'the buffer still has the unsaved change of the last test')
      H.fake('POST', '/_fake/reset')
      H.script({
        { kind = 'tool_call', name = 'edit_file', id = 'toolu_unsaved_always',
          input = { path = 'src/tools_target.py', old_text = 'def g', new_text = 'def h' } },
        { kind = 'text', chunks = { 'Renamed.' } },
      })
      send('rename g to h')
      wait_idle()
      H.eq({ 'def h():', '    return 3' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false),
        'the edit landed on the unsaved text (it was refused with "save it" when the daemon read the disk)')
      H.eq(true, vim.bo[buf].modified, "the buffer is not saved for the user (it had the user's changes)")
      H.eq({ 'def g():', '    return 2' }, vim.fn.readfile(file), 'so the disk is as it was')
      H.eq(false, last_tool_result().is_error, 'the model is told it worked', last_tool_result())
    end,
  },
  {
    ':Switchman trust says so when trust.json cannot be read',
    function()
      local trust_file = vim.env.SWITCHMAN_DATA_DIR .. '/trust.json'
      vim.fn.writefile({ '{"file:///w": [' }, trust_file)
      local notified, restore = capture_notify()
      require('switchman.trust').pick(root)
      H.wait_for('the answer', function()
        return #notified >= 2
      end, 30000, function()
        return notified
      end)
      restore()
      vim.fn.delete(trust_file)
      H.check(notified[1]:find('trust.json cannot be read (not valid JSON', 1, true), 'the problem first', notified)
      H.eq('Switchman: no tool is always allowed here; Switchman asks before every change and command.', notified[2])
    end,
  },
  {
    "a worker's question shows under its line in the chat, answered, live and when the chat is drawn again",
    function()
      vim.api.nvim_buf_set_lines(vim.fn.bufnr(file), 0, -1, false, { 'def f():', '    return 1' })
      H.fake('POST', '/_fake/reset')
      H.script({
        { kind = 'tool_call', name = 'delegate', id = 'toolu_tools_asking_worker',
          input = { tier = 'fast', task = 'Make f return 2', context = { mode = 'minimal' },
                    allowed_tools = { 'read_file', 'edit_file' } } },
        edit_step(), -- the worker's
        { kind = 'text', chunks = { 'The user kept it.' } }, -- the worker's answer
        { kind = 'text', chunks = { 'Left as it is.' } }, -- the planner's
      })
      vim.ui.select = function(items, opts, on_choice)
        local want = opts.prompt:find('delegate', 1, true) and 'Allow once' or 'Deny'
        for i, item in ipairs(items) do
          if item == want then
            return on_choice(item, i)
          end
        end
      end
      vim.ui.input = function(_, on_confirm)
        on_confirm('keep it')
      end
      send('make f return 2, with a worker')
      wait_idle()
      local function worker_and_question() -- the worker's mark, its question's line and the diff under it
        local lines = H.lines(chat.view.transcript)
        for i, line in ipairs(lines) do
          if line:find(' worker fast · ', 1, true) and line:find('Make f return 2', 1, true) then
            local out = { line:match('^  (%S+) worker'), lines[i + 1] }
            for j = i + 2, #lines do
              if not lines[j]:find('^      │ ') then
                break
              end
              table.insert(out, lines[j])
            end
            return out
          end
        end
        return lines
      end
      local live = worker_and_question()
      H.eq({ '✓', '    ? Edit src/tools_target.py — Denied: keep it (asked by the worker)' }, vim.list_slice(live, 1, 2),
        'live: the question under the worker line (it was not in the chat)')
      H.check(table.concat(live, '\n'):find('\n      │ %+[^\n]*return 2'), 'live: the diff the question showed, under its line',
        live)
      redraw_from_session('Left as it is.')
      H.eq(live, worker_and_question(), 'the same, drawn from the session')
    end,
  },
  {
    "a command's output is shown under its tool line (its last lines), live and in the rebuilt chat",
    function()
      local printed = {}
      for i = 1, 20 do
        table.insert(printed, 'echo out ' .. i)
      end
      allowed_call_turn('build it', { name = 'run_command', id = 'toolu_shown_output',
        input = { command = table.concat(printed, '; ') .. '; exit 3' } }, 'It failed.')
      local function shown()
        local lines = H.lines(chat.view.transcript)
        for i, line in ipairs(lines) do
          if line == '  ✗ run_command: exit 3' then
            return vim.list_slice(lines, i + 1, i + 10)
          end
        end
        return lines
      end
      local want = { '    ? Run `echo out 1; echo out 2; echo out 3; echo out 4; echo out 5; echo out 6; echo out 7; …` — Allowed once.',
        '    │ … 13 earlier lines' }
      for i = 13, 20 do
        table.insert(want, '    │ out ' .. i)
      end
      local live = shown()
      H.eq(want[2], live[2], 'live: how many lines came before', live)
      H.eq(vim.list_slice(want, 2), vim.list_slice(live, 2, 10), 'live: the last lines', live)
      redraw_from_session('It failed.')
      H.eq(live, shown(), 'the same, drawn from the session')
      local lines, at = transcript_tool_line(chat.session_id, 'It failed.', '  ✗ run_command: exit 3')
      H.eq(live, vim.list_slice(lines, at + 1, at + 10), 'the same in the read-only transcript')
      vim.cmd('tabclose')
    end,
  },
  {
    "a worker's command output is shown under its tool line in the worker's read-only transcript",
    function()
      H.fake('POST', '/_fake/reset')
      local printed = {}
      for i = 1, 12 do
        table.insert(printed, 'echo line ' .. i)
      end
      H.script({
        { kind = 'tool_call', name = 'delegate', id = 'toolu_tools_command_worker',
          input = { tier = 'fast', task = 'Print the lines', context = { mode = 'minimal' },
                    allowed_tools = { 'run_command' } } },
        { kind = 'tool_call', name = 'run_command', id = 'toolu_worker_prints',
          input = { command = table.concat(printed, '; ') } }, -- the worker's
        { kind = 'text', chunks = { 'Printed them.' } }, -- the worker's answer
        { kind = 'text', chunks = { 'The worker printed them.' } }, -- the planner's
      })
      H.stub_select(function(_, label)
        return label == 'Allow once'
      end)
      send('print the lines, with a worker')
      wait_idle()
      local known
      for _, worker in pairs(chat.workers or {}) do
        if worker.update.task and worker.update.task:find('Print the lines', 1, true) then
          known = worker
        end
      end
      H.check(known and known.update.worker_session_id, 'the worker', chat.workers)
      local lines, at = transcript_tool_line(known.update.worker_session_id, 'Printed them.', '  ✓ run_command: exit 0')
      local want = { '    │ … 5 earlier lines' } -- 'Exit status 0.' and lines 1 to 4
      for i = 5, 12 do
        table.insert(want, '    │ line ' .. i)
      end
      H.eq(want, vim.list_slice(lines, at + 2, at + 10), 'its last lines, after the question', lines)
      vim.cmd('tabclose')
    end,
  },
  {
    'an allowed edit of a file that changed on disk while asked says Not applied live, as the rebuilt chat does',
    function()
      changed_on_disk_turn('make g return 2', { disk_edit_step('toolu_disk_edit') }, 'It moved under me.',
        function(line)
          return line:find('^  ✗ edit_file: src/disk_target%.py')
        end, '    ? Edit src/disk_target.py — Not applied: ')
    end,
  },
  {
    "a worker's allowed edit of a file that changed on disk while asked says Not applied live, as the rebuilt chat does",
    function()
      changed_on_disk_turn('make g return 2, with a worker', {
        { kind = 'tool_call', name = 'delegate', id = 'toolu_disk_worker',
          input = { tier = 'fast', task = 'Make g return 2', context = { mode = 'minimal' },
                    allowed_tools = { 'read_file', 'edit_file' } } },
        disk_edit_step('toolu_disk_worker_edit'),
        { kind = 'text', chunks = { 'It moved.' } }, -- the worker's answer
      }, 'The worker could not.', function(line)
        return line:find(' worker fast · ', 1, true) and line:find('Make g return 2', 1, true)
      end, '    ? Edit src/disk_target.py — Not applied: ')
    end,
  },
}
