--- The daemon's edits (`workspace/applyEdit`): applied as Neovim applies any server's edit, then
--- every buffer the edit touched whose text was the file's (not loaded before, or not modified) is
--- written, so the disk and the buffer agree again: the model's next edit of the file, its
--- commands and its reads see the change. `u` still takes it back in the buffer. A buffer that had
--- unsaved changes is left unsaved (the user's changes are not written for them). A write that
--- fails is answered `applied = true` with a `failureReason` saying the change is only in the buffer.
---
--- A change is applied only to the text it was made from. The daemon is sent the workspace's file
--- buffers (switchman.client shares them), makes its edits from their text, unsaved changes included,
--- and names the buffer version it used: an edit of a buffer changed since (typed after the daemon's
--- last look) is refused with the reason, as VS Code does. A buffer too large to be shared is read from
--- the disk by the daemon, so an edit of it while its text is not the disk's is refused too. An
--- approval's Allow checks both before; these checks are for always-allowed tools. Apply of a code block
--- sends the buffer's text (`M.bases` while its request runs), so its edit goes ahead while the buffer
--- still holds that text.
local M = {}

--- The buffer texts sent with `switchman/applyCode` requests still running, by URI.
M.bases = {}

--- The text of a buffer as Apply sends it.
function M.buffer_text(bufnr)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  return table.concat(lines, '\n') .. (vim.bo[bufnr].eol and '\n' or '')
end

--- The buffer version each versioned text edit of a WorkspaceEdit was made from, by URI.
local function edit_versions(edit)
  local versions = {}
  for _, change in ipairs(type(edit.documentChanges) == 'table' and edit.documentChanges or {}) do
    local document = change.textDocument
    if type(document) == 'table' and type(document.uri) == 'string' and type(document.version) == 'number' then
      versions[document.uri] = document.version
    end
  end
  return versions
end

--- The URIs of the documents a WorkspaceEdit changes, each once.
function M.target_uris(edit)
  local uris, seen = {}, {}
  local function add(uri)
    if type(uri) == 'string' and not seen[uri] then
      seen[uri] = true
      table.insert(uris, uri)
    end
  end
  for uri in pairs(type(edit.changes) == 'table' and edit.changes or {}) do
    add(uri)
  end
  for _, change in ipairs(type(edit.documentChanges) == 'table' and edit.documentChanges or {}) do
    if type(change.textDocument) == 'table' then
      add(change.textDocument.uri)
    end
  end
  table.sort(uris)
  return uris
end

--- Whether the buffer of `uri` has the file's text: not loaded (the edit loads the file), or not modified.
local function as_on_disk(uri)
  local ok, bufnr = pcall(vim.uri_to_bufnr, uri)
  return ok and (not vim.api.nvim_buf_is_loaded(bufnr) or not vim.bo[bufnr].modified)
end

--- Why the edit must not be applied to the buffer of `uri` (its text is not what the edit was made
--- from), or nil: a buffer the daemon is sent (attached to `client_id`) whose version is not the one
--- the edit names; a loaded, modified buffer it is not sent, whose lines differ from the file's,
--- unless an Apply was made from its text.
local function stale(uri, client_id, version)
  local ok, bufnr = pcall(vim.uri_to_bufnr, uri)
  if not ok or not vim.api.nvim_buf_is_loaded(bufnr) then
    return nil
  end
  local shared = client_id and vim.lsp.buf_is_attached(bufnr, client_id)
  if shared and version ~= nil then
    if vim.lsp.util.buf_versions[bufnr] == version then
      return nil
    end
    return ('%s changed in the editor after this change was made from its text: applied now it would have '
      .. 'landed in the wrong place, so nothing was changed. Read the file again and make the change anew.')
      :format(vim.fn.fnamemodify(vim.uri_to_fname(uri), ':~:.'))
  end
  -- no version: the daemon made the edit from the disk (it did not have this buffer's text)
  if not vim.bo[bufnr].modified then
    return nil
  end
  local fname = vim.uri_to_fname(uri)
  local read, disk = pcall(vim.fn.readfile, fname)
  if not read or vim.fn.filereadable(fname) == 0
      or vim.deep_equal(disk, vim.api.nvim_buf_get_lines(bufnr, 0, -1, false))
      or M.bases[uri] == M.buffer_text(bufnr) then
    return nil
  end
  if shared then
    return ('%s has unsaved changes, and this change was made from the file on disk: applied to the '
      .. "editor's text it would have landed in the wrong place, so nothing was changed. Read the file again "
      .. 'and make the change anew.'):format(vim.fn.fnamemodify(fname, ':~:.'))
  end
  return ('%s has unsaved changes and is too large to be shared with Switchman: save it (or revert it), '
    .. "then ask again. This change was made from the file on disk: applied to the editor's text it would "
    .. 'have landed in the wrong place, so nothing was changed.'):format(vim.fn.fnamemodify(fname, ':~:.'))
end

--- Write the buffer of `uri` if the edit left it modified; nil, or why it could not be written.
local function write(uri)
  local bufnr = vim.uri_to_bufnr(uri)
  if not vim.api.nvim_buf_is_loaded(bufnr) or not vim.bo[bufnr].modified then
    return nil
  end
  local ok, err = true, nil
  -- the error caught inside: one that leaves nvim_buf_call carries, on 0.7, "Error executing lua",
  -- the plugin's path and a traceback, all of which went to the model
  pcall(vim.api.nvim_buf_call, bufnr, function()
    ok, err = pcall(vim.cmd, 'silent write')
  end)
  if ok and not vim.bo[bufnr].modified then
    return nil
  end
  if ok then
    return 'Neovim did not write it'
  end
  local text = tostring(err)
  return text:match('E%d+: [^\n]*') or (text:match('^[^\n]*'):gsub('^Vim[^:]*:', ''))
end

--- Close the buffer's undo block, so `u` takes back this edit alone (not an earlier one with it).
local function undo_break(uri)
  local ok, bufnr = pcall(vim.uri_to_bufnr, uri)
  if ok and vim.api.nvim_buf_is_loaded(bufnr) then
    pcall(vim.api.nvim_buf_call, bufnr, function()
      vim.cmd('let &g:undolevels = &g:undolevels')
    end)
  end
end

--- The files a WorkspaceEdit creates, each `{ uri, text }`: the text the daemon inserts into the
--- new, empty document (`create_file`), or nil when it inserts nothing.
local function created_files(edit)
  local created, texts = {}, {}
  for _, change in ipairs(type(edit.documentChanges) == 'table' and edit.documentChanges or {}) do
    if change.kind == 'create' and type(change.uri) == 'string' then
      table.insert(created, change.uri)
    elseif type(change.textDocument) == 'table' and type(change.edits) == 'table' and #change.edits == 1 then
      texts[change.textDocument.uri] = change.edits[1].newText
    end
  end
  return vim.tbl_map(function(uri)
    return { uri = uri, text = texts[uri] }
  end, created)
end

--- Before a file is created: its folders (Neovim 0.7-0.9's `create_file` opens the file for writing
--- in a folder that may not exist, and fails with "attempt to index local 'file'").
local function make_folders(created)
  for _, file in ipairs(created) do
    vim.fn.mkdir(vim.fn.fnamemodify(vim.uri_to_fname(file.uri), ':h'), 'p')
  end
end

--- After a file is created with its text: a text ending in a line break leaves an empty last line
--- in the buffer (the insert went before the new buffer's one empty line), which the write would
--- make a second line break; it is taken out, so the file holds exactly the text.
local function trim_created(created)
  for _, file in ipairs(created) do
    local ok, bufnr = pcall(vim.uri_to_bufnr, file.uri)
    local text = type(file.text) == 'string' and file.text or ''
    if ok and vim.api.nvim_buf_is_loaded(bufnr) and text:sub(-1) == '\n' then
      local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
      if #lines > 1 and lines[#lines] == '' and table.concat(lines, '\n') == text then
        pcall(vim.api.nvim_buf_call, bufnr, function()
          vim.cmd('silent! undojoin')
        end)
        vim.api.nvim_buf_set_lines(bufnr, -2, -1, false, {})
        vim.bo[bufnr].eol = true
      end
    end
  end
end

--- Why a deletion in the edit must not happen, or nil: the file's buffer has unsaved changes,
--- which Neovim's `delete_file` would drop with the buffer (an always-allowed `delete_file`
--- asks nothing, so nobody would have seen them go).
local function unsaved_deletion(edit)
  for _, change in ipairs(type(edit.documentChanges) == 'table' and edit.documentChanges or {}) do
    if change.kind == 'delete' and type(change.uri) == 'string' then
      local ok, bufnr = pcall(vim.uri_to_bufnr, change.uri)
      if ok and vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].modified then
        return ('%s has unsaved changes in the editor, which deleting it would throw away, so it was not '
          .. 'deleted. The user can save or discard them, then ask again.')
          :format(vim.fn.fnamemodify(vim.uri_to_fname(change.uri), ':~:.'))
      end
    end
  end
  return nil
end

--- The `workspace/applyEdit` handler of Switchman's clients.
function M.handle(err, params, ctx, config)
  local edit = type(params) == 'table' and type(params.edit) == 'table' and params.edit or {}
  local unsaved = unsaved_deletion(edit)
  if unsaved then
    return { applied = false, failureReason = unsaved }
  end
  local targets = M.target_uris(edit)
  local versions = edit_versions(edit)
  for _, uri in ipairs(targets) do
    local why = stale(uri, type(ctx) == 'table' and ctx.client_id or nil, versions[uri])
    if why then
      return { applied = false, failureReason = why }
    end
  end
  local clean = vim.tbl_filter(as_on_disk, targets)
  for _, uri in ipairs(targets) do
    undo_break(uri)
  end
  local created = created_files(edit)
  make_folders(created)
  local result = vim.lsp.handlers['workspace/applyEdit'](err, params, ctx, config)
  if type(result) ~= 'table' or not result.applied then
    return result
  end
  trim_created(created)
  for _, uri in ipairs(targets) do -- a file the edit loaded is shared from now on, like one opened
    local ok, bufnr = pcall(vim.uri_to_bufnr, uri)
    if ok then
      require('switchman.client').share(bufnr)
    end
  end
  local failures = {}
  for _, uri in ipairs(clean) do
    local why = write(uri)
    if why then
      table.insert(failures, ('%s (%s)'):format(vim.fn.fnamemodify(vim.uri_to_fname(uri), ':~:.'), why))
    end
  end
  if #failures > 0 then
    return { applied = true, failureReason = 'The change is in the editor but was not saved: '
      .. table.concat(failures, ', ') .. '. The file on disk still has the old text.' }
  end
  return { applied = true }
end

return M
