-- The daemon is sent the workspace's file buffers, so its tools read and edit what the user sees.
local H = require('harness')
local chat_module = require('switchman.chat')
local client_module = require('switchman.client')
local workspace = require('switchman.workspace')

local root = workspace.normalize(vim.env.SWITCHMAN_TEST_WORKSPACE)
local file = root .. '/src/app.py'
local DISK = { 'def main():', '    return 42' }
local chat

--- The content of every tool result the model was sent, in order (as text).
local function tool_results()
  local _, answer = H.fake('GET', '/_fake/requests')
  local found = {}
  for _, request in ipairs(answer.requests) do
    local last = request.body.messages[#request.body.messages]
    for _, part in ipairs(type(last.content) == 'table' and last.content or {}) do
      if part.type == 'tool_result' then
        table.insert(found, vim.inspect(part.content))
      end
    end
  end
  return found
end

local function client()
  return H.check(client_module.get(root), 'the workspace has a running daemon')
end

--- One turn of the model calling `calls` (then answering), every approval allowed once; the
--- tool results it was sent.
local function turn(message, calls)
  H.fake('POST', '/_fake/reset')
  local steps = {}
  for index, call in ipairs(calls) do
    steps[index] = { kind = 'tool_call', name = call[1], id = call[2], input = call[3] }
  end
  table.insert(steps, { kind = 'text', chunks = { 'Done.' } })
  H.script(steps)
  H.stub_select(function(_, label)
    return label == 'Allow once'
  end)
  H.send_chat(chat, message)
  H.wait_turn(chat)
  return tool_results()
end

local function edit_in_window(path)
  local code_win = nil
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local buf = vim.api.nvim_win_get_buf(win)
    if buf ~= chat.view.input and buf ~= chat.view.transcript then
      code_win = win
    end
  end
  vim.api.nvim_set_current_win(H.check(code_win, 'a window for files'))
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  return vim.api.nvim_get_current_buf()
end

return {
  {
    'file buffers of the workspace are shared when its daemon starts; the chat and other files are not',
    function()
      vim.cmd('edit ' .. vim.fn.fnameescape(file))
      local code = vim.api.nvim_get_current_buf()
      local omnifunc = vim.bo[code].omnifunc
      vim.api.nvim_buf_set_lines(code, 0, 0, false, { '# typed, not saved' })
      local outside = vim.env.HOME .. '/outside.py'
      vim.fn.writefile({ 'x = 1' }, outside)
      vim.cmd('split ' .. vim.fn.fnameescape(outside))
      local other = vim.api.nvim_get_current_buf()
      vim.cmd('Switchman chat')
      chat = H.check(chat_module.get(root), 'a chat for the workspace')
      H.wait_for('the code buffer shared', function()
        return vim.lsp.buf_is_attached(code, client().id)
      end, 20000)
      H.eq(false, vim.lsp.buf_is_attached(other, client().id), 'a file outside the workspace is not shared')
      H.eq(false, vim.lsp.buf_is_attached(chat.view.transcript, client().id), 'nor the chat transcript')
      H.eq(false, vim.lsp.buf_is_attached(chat.view.input, client().id), 'nor its input')
      if vim.fn.has('nvim-0.11') == 1 then
        H.wait_for('the attach callbacks', function()
          return client().attached_buffers[code] == true
        end, 10000)
        local k = vim.api.nvim_buf_call(code, function()
          return vim.fn.maparg('K', 'n')
        end)
        H.eq('', k, 'K is not turned into hover for a file Switchman has nothing to say about')
        H.eq(omnifunc, vim.bo[code].omnifunc, "nor 'omnifunc' into LSP completion")
      end
    end,
  },
  {
    'read_file and grep see the unsaved line, edit_file changes it in the buffer, which stays unsaved',
    function()
      local results = turn('edit the line I typed', {
        { 'read_file', 'toolu_read', { path = 'src/app.py' } },
        { 'grep', 'toolu_grep', { pattern = 'typed' } },
        { 'edit_file', 'toolu_edit', { path = 'src/app.py', old_text = '# typed, not saved', new_text = '# typed, then edited' } },
      })
      H.check(results[1] and results[1]:find('# typed, not saved', 1, true), 'read_file returned the unsaved line', results)
      H.check(results[2] and results[2]:find('src/app.py:1: # typed, not saved', 1, true), 'grep found it', results)
      H.check(results[3] and results[3]:find('Edited src/app.py', 1, true), 'the edit was applied', results)
      local code = vim.fn.bufnr(file)
      H.eq({ '# typed, then edited', DISK[1], DISK[2] }, vim.api.nvim_buf_get_lines(code, 0, -1, false), 'in the buffer')
      H.eq(true, vim.bo[code].modified, "left unsaved: the buffer has the user's own changes")
      H.eq(DISK, vim.fn.readfile(file), 'the disk is unchanged')
    end,
  },
  {
    'an edit naming an older version of a shared buffer is refused (the user typed after the daemon looked)',
    function()
      local code = vim.fn.bufnr(file)
      local before = vim.api.nvim_buf_get_lines(code, 0, -1, false)
      local version = vim.lsp.util.buf_versions[code]
      local function edit(at_version)
        local start = { line = 0, character = 0 }
        return require('switchman.edits').handle(nil, { edit = { documentChanges = { {
          textDocument = { uri = vim.uri_from_fname(file), version = at_version },
          edits = { { range = { start = start, ['end'] = start }, newText = '# inserted\n' } },
        } } } }, { client_id = client().id, method = 'workspace/applyEdit' }, {})
      end
      local stale = edit(version - 1)
      H.eq(false, stale.applied, 'refused')
      H.check(stale.failureReason:find('changed in the editor after this change was made from its text', 1, true),
        'saying why', stale)
      H.eq(before, vim.api.nvim_buf_get_lines(code, 0, -1, false), 'the buffer is as it was')
      H.eq(true, edit(version).applied, 'the current version is edited')
      H.eq('# inserted', vim.api.nvim_buf_get_lines(code, 0, 1, false)[1], 'in the buffer')
      -- naming no version, the edit was made from the disk (the daemon missed the buffer's text:
      -- a path it could not match): on a buffer with other unsaved text it would garble it
      before = vim.api.nvim_buf_get_lines(code, 0, -1, false)
      local unversioned = edit(nil)
      H.eq(false, unversioned.applied, 'an unversioned edit of a modified shared buffer is refused')
      H.check(unversioned.failureReason:find('has unsaved changes, and this change was made from the file on disk',
        1, true), 'saying why', unversioned)
      H.eq(before, vim.api.nvim_buf_get_lines(code, 0, -1, false), 'the buffer is as it was')
      vim.api.nvim_buf_call(code, function()
        vim.cmd('silent edit!')
      end)
    end,
  },
  {
    'a file opened while the daemon runs is shared at once, and read from the disk again once wiped',
    function()
      local path = root .. '/src/later.py'
      vim.fn.writefile({ 'later = 1' }, path)
      local buf = edit_in_window(path)
      H.wait_for('the new buffer shared', function()
        return vim.lsp.buf_is_attached(buf, client().id)
      end, 10000)
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'later = 2  # unsaved' })
      local results = turn('read later.py', { { 'read_file', 'toolu_read_later', { path = 'src/later.py' } } })
      H.check(results[1]:find('later = 2  # unsaved', 1, true), 'the unsaved text', results)
      vim.cmd('bwipeout! ' .. buf)
      results = turn('read later.py again', { { 'read_file', 'toolu_read_wiped', { path = 'src/later.py' } } })
      H.check(results[1]:find('later = 1', 1, true), 'the disk once the buffer is gone', results)
    end,
  },
  {
    'a buffer saved under a new name (:saveas) is shared as that file: its unsaved text is read and edited',
    function()
      local old = root .. '/src/before.py'
      vim.fn.writefile({ 'x = 1', 'y = 2' }, old)
      local buf = edit_in_window(old)
      H.wait_for('the buffer shared', function()
        return vim.lsp.buf_is_attached(buf, client().id)
      end, 10000)
      vim.cmd('saveas ' .. vim.fn.fnameescape(root .. '/src/after.py'))
      vim.api.nvim_buf_set_lines(buf, 0, 0, false, { '# typed after saveas' })
      local results = turn('make y 3 in after.py', {
        { 'read_file', 'toolu_read_after', { path = 'src/after.py' } },
        { 'edit_file', 'toolu_edit_after', { path = 'src/after.py', old_text = 'y = 2', new_text = 'y = 3' } },
      })
      H.check(results[1]:find('# typed after saveas', 1, true), 'read_file read the renamed buffer', results)
      H.eq({ '# typed after saveas', 'x = 1', 'y = 3' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false),
        'the edit landed on its line')
      results = turn('read before.py', { { 'read_file', 'toolu_read_before', { path = 'src/before.py' } } })
      H.check(not results[1]:find('typed', 1, true), 'the old name is the file on disk again', results)
    end,
  },
  {
    'a buffer too large to share is read from the disk, and an edit of its unsaved text is not applied',
    function()
      local options = require('switchman.config').options
      local limit = options.share_max_bytes
      options.share_max_bytes = 10
      local path = root .. '/src/big.py'
      vim.fn.writefile({ 'def big():', '    return 1' }, path)
      local buf = edit_in_window(path)
      options.share_max_bytes = limit
      H.eq(false, vim.lsp.buf_is_attached(buf, client().id), 'not shared')
      vim.api.nvim_buf_set_lines(buf, 0, 0, false, { '# unsaved' })
      local results = turn('make big return 2', {
        { 'read_file', 'toolu_read_big', { path = 'src/big.py' } },
        { 'edit_file', 'toolu_edit_big', { path = 'src/big.py', old_text = 'return 1', new_text = 'return 2' } },
      })
      H.check(not results[1]:find('# unsaved', 1, true), 'read_file read the disk', results)
      H.check(results[2]:find('changed in the editor since this change was proposed', 1, true),
        'the edit made from the disk was not applied to the unsaved buffer', results)
      H.check(results[2]:find('The user allowed this edit of src/big.py, but the editor did not apply it', 1, true)
        and not results[2]:find('denied', 1, true), 'the user allowed it; the model is not told they refused', results)
      H.eq({ '# unsaved', 'def big():', '    return 1' }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), 'not garbled')
    end,
  },
}
