--- One LSP client (one `switchman serve`) per workspace root.
---
--- Neovim 0.7 has only `vim.lsp.start_client` + `vim.lsp.buf_attach_client`;
--- newer versions use `vim.lsp.start`. Other modules subscribe to the daemon's
--- notifications with `on(method, fn)` and send requests with `request()`.
local config = require('switchman.config')
local protocol = require('switchman.protocol')
local workspace = require('switchman.workspace')

local M = {}

local by_root = {} -- root -> client id
local roots = {} -- client id -> root
local known = {} -- root -> true once a client was started for it (kept after a crash)
local stopping = {} -- client id -> true while we stop it on purpose
local listeners = {} -- notification method -> { fn(root, params) }
local has_011 = vim.fn.has('nvim-0.11') == 1

--- Call a client method the way this Neovim expects (`client:m()` from 0.11, `client.m()` before).
function M.call(client, name, ...)
  if has_011 then
    return client[name](client, ...)
  end
  return client[name](...)
end

--- Run `fn(root, params)` for every `method` notification from any Switchman client;
--- method 'exit' runs `fn(root, { code, signal, expected, replaced })` when a daemon stops
--- (`replaced`: the root already has its next client).
function M.on(method, fn)
  listeners[method] = listeners[method] or {}
  table.insert(listeners[method], fn)
end

local function dispatch(method)
  return function(_, params, ctx)
    for _, fn in ipairs(listeners[method] or {}) do
      fn(roots[ctx.client_id], params or {})
    end
  end
end

--- Whether `bufnr` is one of Switchman's configuration files (the daemon's language features are theirs).
local function is_config(bufnr)
  return bufnr ~= nil and vim.api.nvim_buf_is_valid(bufnr)
    and workspace.config_kind(vim.api.nvim_buf_get_name(bufnr)) ~= nil
end

--- A handler that shows the daemon's answer unless it is empty for a file that is no configuration
--- (Neovim 0.7 says "No document symbols found" for each client that found none).
local function quiet_when_empty(method)
  return function(err, result, ctx, cfg)
    if err == nil and (result == nil or vim.tbl_isempty(result)) and not is_config(ctx.bufnr) then
      return
    end
    return vim.lsp.handlers[method](err, result, ctx, cfg)
  end
end

local function handlers()
  local h = {}
  for _, method in pairs(protocol.notification) do
    h[method] = dispatch(method)
  end
  h[protocol.server_request.approve] = function(err, request, ctx)
    return require('switchman.approval').handle(err, request, ctx, roots[ctx.client_id])
  end
  h['workspace/applyEdit'] = function(err, params, ctx, config)
    return require('switchman.edits').handle(err, params, ctx, config)
  end
  h['textDocument/documentSymbol'] = quiet_when_empty('textDocument/documentSymbol')
  h[protocol.cancel_request] = function(_, params)
    require('switchman.approval').withdraw(params and params.id,
      'Switchman no longer needs this answer (the turn was stopped, or waited too long); nothing was done.')
  end
  return h
end

--- Start `fetch(done)` and wait at most `ms` (a second) for it to call `done` (completion has to
--- answer at once: without it, the first <Tab> completed nothing and only the next one the names).
function M.await(fetch, ms)
  local answered = false
  fetch(function()
    answered = true
  end)
  vim.wait(ms or 1000, function()
    return answered
  end, 10)
end

--- The live client of a workspace root, or nil.
function M.get(root)
  local id = by_root[root]
  local client = id and vim.lsp.get_client_by_id(id)
  if client and not M.call(client, 'is_stopped') then
    return client
  end
  by_root[root] = nil
  return nil
end

--- Every live Switchman client as { root = client }.
function M.all()
  local out = {}
  for root in pairs(by_root) do
    out[root] = M.get(root)
  end
  return out
end

--- The root a client id serves.
function M.root_of(client_id)
  return roots[client_id]
end

--- The one line said when a daemon stops unexpectedly; it fits the command line, so typing
--- is never interrupted by a hit-enter prompt (details: :checkhealth and the LSP log).
function M.exit_message(root, code, signal)
  local crashed = code ~= 0 or (signal or 0) ~= 0
  local what = (signal or 0) ~= 0 and ('killed (signal %d)'):format(signal)
    or crashed and ('exited with code %d'):format(code or -1) or 'stopped'
  local template = 'Switchman: daemon for %s ' .. what .. '; :Switchman restart'
  local name = vim.fn.fnamemodify(root or '?', ':t')
  local room = math.max(vim.v.echospace or 0, vim.o.columns - 12) - vim.fn.strdisplaywidth(template:format(''))
  if vim.fn.strdisplaywidth(name) > room then -- the folder name gives way, not the advice
    name = vim.fn.strcharpart(name, 0, math.max(room - 1, 1)) .. '…'
  end
  return template:format(name), crashed
end

--- Neovim reports a non-zero exit itself ("Client … quit with exit code …") from a scheduled
--- callback. A second message right after ours raises a hit-enter prompt mid-typing, and ours
--- says what to do, so that one report is dropped (once; nothing else is touched).
local function drop_builtin_exit_report(client_id)
  local notify = vim.notify
  local wrapper
  local function restore()
    if vim.notify == wrapper then
      vim.notify = notify
    end
  end
  wrapper = function(message, ...)
    if type(message) == 'string' and message:match('^Client %S+ quit with exit code')
      and (message:find('Client ' .. client_id .. ' ', 1, true)
        or message:find('Client ' .. protocol.client_name .. ' ', 1, true)) then
      return restore()
    end
    return notify(message, ...)
  end
  vim.notify = wrapper
  vim.defer_fn(restore, 1000)
end

local function on_exit(code, signal, client_id)
  local root = roots[client_id]
  if root and by_root[root] == client_id then
    by_root[root] = nil
  end
  local expected = stopping[client_id]
  stopping[client_id] = nil
  if not expected then
    drop_builtin_exit_report(client_id)
  end
  vim.schedule(function()
    -- a restart may already have started this root's next client: its state stays
    local replaced = root ~= nil and M.get(root) ~= nil
    if root and not replaced then
      require('switchman.skill_watch').release(root)
    end
    require('switchman.approval').withdraw_root(root,
      'the Switchman daemon stopped before you answered; nothing was done.')
    for _, fn in ipairs(listeners.exit or {}) do
      fn(root, { code = code, signal = signal, expected = expected, replaced = replaced })
    end
    if not expected then
      local message, crashed = M.exit_message(root, code, signal)
      vim.notify(message, crashed and vim.log.levels.ERROR or vim.log.levels.INFO)
    end
  end)
end

--- What the daemon's environment adds to Neovim's (`cmd_env`, `config_dir`), or nil.
function M.daemon_env()
  local extra = vim.deepcopy(config.options.cmd_env or {})
  if config.options.config_dir then
    extra.SWITCHMAN_CONFIG_DIR = workspace.config_dir()
  end
  return next(extra) and extra or nil
end

--- The client capabilities: the user's (or Neovim's), with versioned document edits, so the daemon's
--- edits name the version of the buffer they were made from (switchman.edits refuses one that moved).
local function capabilities()
  local caps = vim.deepcopy(config.options.capabilities or vim.lsp.protocol.make_client_capabilities())
  caps.workspace = caps.workspace or {}
  caps.workspace.workspaceEdit = caps.workspace.workspaceEdit or {}
  caps.workspace.workspaceEdit.documentChanges = true
  return caps
end

--- Neovim 0.11 maps K to hover and sets 'omnifunc' for every buffer a client that offers them
--- attaches to. Switchman offers them for its configuration files only: in any other buffer it shares,
--- K and 'omnifunc' go back to what they were unless another client offers them too.
local function undo_lsp_defaults(client, bufnr)
  if not has_011 or is_config(bufnr) then
    return
  end
  local others = { hover = false, completion = false }
  for _, other in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    if other.id ~= client.id then
      others.hover = others.hover or other:supports_method('textDocument/hover')
      others.completion = others.completion or other:supports_method('textDocument/completion')
    end
  end
  local map = vim.api.nvim_buf_call(bufnr, function()
    return vim.fn.maparg('K', 'n', false, true)
  end)
  if not others.hover and map.buffer == 1 and map.desc == 'vim.lsp.buf.hover()' then
    pcall(vim.keymap.del, 'n', 'K', { buffer = bufnr })
  end
  local ok, before = pcall(vim.api.nvim_buf_get_var, bufnr, 'switchman_omnifunc')
  if not others.completion and ok and vim.bo[bufnr].omnifunc == 'v:lua.vim.lsp.omnifunc' then
    vim.bo[bufnr].omnifunc = before
  end
end

local function client_config(root)
  return {
    name = protocol.client_name,
    cmd = config.server_cmd(),
    cmd_env = M.daemon_env(),
    root_dir = root,
    workspace_folders = { { uri = workspace.uri(root), name = root } },
    init_options = config.options.init_options,
    capabilities = capabilities(),
    -- Each change is sent at once (not batched after 150 ms): the daemon then has the buffer as an
    -- edit of its own left it before the edit's answer, so its next edit of the file is made from it.
    flags = { debounce_text_changes = 0 },
    handlers = handlers(),
    on_exit = on_exit,
    on_attach = function(client, bufnr)
      undo_lsp_defaults(client, bufnr)
      if config.options.on_attach and is_config(bufnr) then
        config.options.on_attach(client, bufnr)
      end
    end,
  }
end

--- Why the daemon cannot start, or nil when its command is executable.
function M.cannot_start()
  local cmd = config.server_cmd()
  if vim.fn.executable(cmd[1]) == 1 then
    return nil
  end
  return ('Switchman: cannot start the daemon: `%s` is not an executable on your PATH. '
    .. 'Install Switchman from a clone of its repository (`make` there makes .venv/bin/switchman; it is not '
    .. 'on PyPI, so `pip install switchman` would not get it) and point the plugin at it with '
    .. "require('switchman').setup({ cmd = { '/path/to/switchman', 'serve' } }) "
    .. "or setup({ python = '/path/to/python' }). :checkhealth switchman tells more."):format(cmd[1])
end

local function spawn(root, bufnr)
  local cfg = client_config(root)
  local never_reuse = function()
    return false
  end
  if vim.lsp.start and bufnr then
    return vim.lsp.start(cfg, { bufnr = bufnr, reuse_client = never_reuse })
  elseif vim.lsp.start and has_011 then
    return vim.lsp.start(cfg, { attach = false, reuse_client = never_reuse })
  end
  local id = vim.lsp.start_client(cfg)
  if id and bufnr then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

--- Attach `bufnr` to `client`, keeping its 'omnifunc' to put back (see undo_lsp_defaults).
local function attach_buffer(bufnr, client)
  if vim.lsp.buf_is_attached(bufnr, client.id) then
    return
  end
  if not is_config(bufnr) then
    vim.api.nvim_buf_set_var(bufnr, 'switchman_omnifunc', vim.bo[bufnr].omnifunc)
  end
  vim.lsp.buf_attach_client(bufnr, client.id)
end

--- Whether Neovim itself tells the servers of a buffer renamed by `:saveas` (at its write; 0.10 on).
local function renames_sent()
  local ok, changetracking = pcall(require, 'vim.lsp._changetracking')
  return ok and type(changetracking) == 'table' and changetracking._get_and_set_name ~= nil
end

--- The text of `bufnr` as Neovim's LSP client sends it (its line ending, the last one if 'eol').
local function full_text(bufnr)
  local ending = ({ dos = '\r\n', mac = '\r' })[vim.bo[bufnr].fileformat] or '\n'
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, true), ending)
    .. (vim.bo[bufnr].eol and ending or '')
end

--- `bufnr` was renamed from `old_name` (`:saveas`, `:file`). Neovim before 0.10 goes on sending its
--- changes under the new name, of a document no server was told of, while the daemon keeps the old
--- name's text: each Switchman client attached is told the old one closed and the new one open, as
--- later Neovims do. Its tools then read and edit the renamed file's buffer, not the disk's file.
function M.renamed(bufnr, old_name)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if old_name == nil or old_name == '' or name == old_name or renames_sent() then
    return
  end
  for _, client in pairs(M.all()) do
    if vim.lsp.buf_is_attached(bufnr, client.id) then
      client.notify('textDocument/didClose', { textDocument = { uri = vim.uri_from_fname(old_name) } })
      client.notify('textDocument/didOpen', { textDocument = {
        uri = vim.uri_from_bufnr(bufnr), version = vim.lsp.util.buf_versions[bufnr] or 0,
        languageId = vim.bo[bufnr].filetype, text = full_text(bufnr),
      } })
    end
  end
end

--- The client for `root`, started if needed; `bufnr` (optional) is attached to it.
--- Returns client, or nil and a message for the user.
function M.ensure(root, bufnr)
  local client = M.get(root)
  if client then
    if bufnr then
      attach_buffer(bufnr, client)
    end
    return client
  end
  local problem = M.cannot_start()
  if problem then
    return nil, problem
  end
  local id = spawn(root, bufnr)
  if not id then
    return nil, 'Switchman: the daemon did not start; see :checkhealth switchman and the LSP log.'
  end
  by_root[root], roots[id], known[root] = id, root, true
  M.reattach(root)
  require('switchman.skill_watch').watch(root)
  return vim.lsp.get_client_by_id(id)
end

--- The file `bufnr` holds, when its buffer may be shared with a daemon: a loaded buffer of a file
--- (not the chat, a terminal, a help page or a `scheme://` name) no larger than `share_max_bytes`.
--- Configuration files are not: `M.attach` gives each to one daemon.
local function shareable_file(bufnr)
  if not vim.api.nvim_buf_is_loaded(bufnr) or vim.bo[bufnr].buftype ~= '' or is_config(bufnr) then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  local size = vim.api.nvim_buf_get_offset(bufnr, vim.api.nvim_buf_line_count(bufnr))
  if size > (config.options.share_max_bytes or 0) then
    return nil
  end
  return workspace.normalize(name)
end

local function inside(path, root)
  return path == root or path:sub(1, #root + 1) == root .. package.config:sub(1, 1)
end

--- Whether Neovim watches files for `client` itself (0.10+ where it offers to, on macOS and Windows): the
--- daemon registered its watchers (the user's `skills/**` among them) and Neovim sends their events, so
--- `switchman.skill_watch` does not.
function M.watches_files(client)
  local method = 'workspace/didChangeWatchedFiles'
  if type(client.registrations) == 'table' then -- 0.11
    return not vim.tbl_isempty(client.registrations[method] or {})
  end
  local dynamic = client.dynamic_capabilities -- 0.10
  local ok, found = pcall(function()
    return dynamic and dynamic:get(method)
  end)
  return ok and found ~= nil and found ~= false
end

--- Send the running daemons whose root holds the file of `bufnr` its text and changes (the buffer is
--- attached to their clients), so their tools read and edit what the user sees. No daemon is started.
function M.share(bufnr)
  local path = shareable_file(bufnr)
  if not path then
    return
  end
  for root, client in pairs(M.all()) do
    if inside(path, root) then
      attach_buffer(bufnr, client)
    end
  end
end

--- Attach the root's configuration buffers that are not attached to its client (after the
--- daemon came back from a crash or a restart), and share the file buffers under the root;
--- attaching sends their current, maybe unsaved, text.
function M.reattach(root)
  local client = M.get(root)
  if not client then
    return
  end
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    local ok, owner = pcall(vim.api.nvim_buf_get_var, bufnr, 'switchman_root')
    if ok and owner == root and vim.api.nvim_buf_is_loaded(bufnr)
      and workspace.config_kind(vim.api.nvim_buf_get_name(bufnr)) then
      attach_buffer(bufnr, client)
    else
      local path = shareable_file(bufnr)
      if path and inside(path, root) then
        attach_buffer(bufnr, client)
      end
    end
  end
end

--- The message to show for a JSON-RPC error (the daemon writes `message` for the user).
function M.error_message(err)
  if type(err) == 'table' then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end

--- Tell the user the daemon's error (or a problem starting it) as the plugin says everything,
--- `Switchman: …`, so it is clear who says it (the daemon's own messages do not name it).
function M.notify_error(err, level)
  local message = M.error_message(err)
  if not message:find('^Switchman') then
    message = 'Switchman: ' .. message
  end
  vim.notify(message, level or vim.log.levels.ERROR)
end

--- Send `method` to the workspace's daemon; `on_done(err, result)` runs on the main loop.
--- Returns the request id (for cancelling), or nil when the daemon could not be reached.
function M.request(root, method, params, on_done)
  local client, problem = M.ensure(root)
  if not client then
    on_done({ message = problem }, nil)
    return nil
  end
  local ok, id = M.call(client, 'request', method, params, function(err, result)
    on_done(err, result)
  end)
  if not ok then
    on_done({ message = 'Switchman: the daemon has stopped; :Switchman restart starts it again.' }, nil)
    return nil
  end
  return id
end

--- Send `method` and wait up to `timeout_ms` for the answer; returns err, result.
function M.request_sync(root, method, params, timeout_ms)
  local done, err, result = false, nil, nil
  M.request(root, method, params, function(e, r)
    done, err, result = true, e, r
  end)
  if not vim.wait(timeout_ms or 10000, function()
    return done
  end, 10) then
    return { message = ('Switchman: no answer to %s within %d ms.'):format(method, timeout_ms or 10000) }, nil
  end
  return err, result
end

--- Cancel a request with `$/cancelRequest`.
function M.cancel_request(root, request_id)
  local client = M.get(root)
  if client and request_id then
    M.call(client, 'cancel_request', request_id)
  end
end

--- Attach a configuration buffer: a workspace file to its workspace's client, the user's
--- files to any running client (they are not part of a workspace), else to one rooted at
--- the config folder.
function M.attach(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local kind = workspace.config_kind(name)
  if not kind then
    return nil
  end
  local in_workspace = kind == 'workspace' or kind == 'workspace-profiles'
  local root = in_workspace and workspace.root_for_path(name) or next(M.all()) or workspace.config_dir()
  local client, problem = M.ensure(root, bufnr)
  if not client then
    vim.notify(problem, vim.log.levels.ERROR)
    return nil
  end
  vim.api.nvim_buf_set_var(bufnr, 'switchman_root', root)
  local encoding = vim.bo[bufnr].fileencoding:lower()
  if encoding ~= '' and encoding ~= 'utf-8' and encoding ~= 'utf8' then
    -- the daemon is sent the buffer (valid text, no diagnostic) but reads the file as UTF-8 only
    vim.notify(('Switchman: %s is not UTF-8 (Neovim read it as %s): Switchman reads its configuration as UTF-8 '
      .. 'only and cannot use this file. To write it as UTF-8: :set fileencoding=utf-8, then :write.'):format(
      vim.fn.fnamemodify(name, ':t'), encoding), vim.log.levels.WARN)
  end
  return client
end

--- Stop the client of `root` (every client when nil); returns the stopped clients.
function M.stop(root)
  local stopped = {}
  for r, client in pairs(M.all()) do
    if root == nil or r == root then
      stopping[client.id] = true
      M.call(client, 'stop')
      by_root[r] = nil
      stopped[r] = client
    end
  end
  return stopped
end

--- Stop the running clients and start a client again for every root that had one, also
--- those whose daemon crashed; their configuration buffers are attached again. True when
--- all stopped in time.
function M.restart()
  local stopped = M.stop()
  local all_stopped = vim.wait(5000, function()
    for _, client in pairs(stopped) do
      if not M.call(client, 'is_stopped') then
        return false
      end
    end
    return true
  end, 20)
  local problem
  for root in pairs(known) do
    local _, cannot = M.ensure(root)
    problem = problem or cannot
  end
  if problem then
    vim.notify(problem, vim.log.levels.ERROR)
  end
  return all_stopped
end

return M
