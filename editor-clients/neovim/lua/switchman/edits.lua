--- The daemon's edits (`workspace/applyEdit`): applied as Neovim applies any server's edit, then
--- every buffer the edit touched whose text was the file's (not loaded before, or not modified) is
--- written, so the disk and the buffer agree again: the model's next edit of the file, its
--- commands and its reads see the change. `u` still takes it back in the buffer. A buffer that had
--- unsaved changes is left unsaved (the user's changes are not written for them). A write that
--- fails is answered `applied = true` with a `failureReason` saying the change is only in the buffer.
local M = {}

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

--- Write the buffer of `uri` if the edit left it modified; nil, or why it could not be written.
local function write(uri)
  local bufnr = vim.uri_to_bufnr(uri)
  if not vim.api.nvim_buf_is_loaded(bufnr) or not vim.bo[bufnr].modified then
    return nil
  end
  local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
    vim.cmd('silent write')
  end)
  if ok and not vim.bo[bufnr].modified then
    return nil
  end
  return ok and 'Neovim did not write it' or (tostring(err):gsub('^Vim[^:]*:', ''))
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

--- The `workspace/applyEdit` handler of Switchman's clients.
function M.handle(err, params, ctx, config)
  local edit = type(params) == 'table' and type(params.edit) == 'table' and params.edit or {}
  local targets = M.target_uris(edit)
  local clean = vim.tbl_filter(as_on_disk, targets)
  for _, uri in ipairs(targets) do
    undo_break(uri)
  end
  local result = vim.lsp.handlers['workspace/applyEdit'](err, params, ctx, config)
  if type(result) ~= 'table' or not result.applied then
    return result
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
