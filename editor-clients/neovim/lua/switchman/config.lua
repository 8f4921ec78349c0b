--- Options given to `require('switchman').setup()`, merged over the defaults.
local M = {}

--- The defaults; `:help switchman-setup` documents every key.
M.defaults = {
  -- The daemon: `switchman serve` from PATH unless `cmd` or `python` says otherwise.
  cmd = { 'switchman', 'serve' },
  -- A Python interpreter with Switchman installed; when set, the daemon runs as
  -- `<python> -m switchman.server.cli serve` and `cmd` is ignored.
  python = nil,
  -- Extra environment variables for the daemon (API keys are better set in your shell).
  cmd_env = nil,
  -- Switchman's config folder; nil: $SWITCHMAN_CONFIG_DIR, else the platform's.
  config_dir = nil,
  -- Files or folders that mark a workspace root (searched upwards from the buffer).
  root_markers = { '.switchman', '.git' },
  -- Attach to routing.yaml / models.yaml buffers when they are opened.
  autostart = true,
  -- A running daemon is sent the workspace's file buffers up to this size (bytes, when attached), so
  -- its tools read and edit what you see, unsaved changes included; 0: only the configuration files.
  share_max_bytes = 2 * 1024 * 1024,
  -- `initializationOptions` sent to the daemon.
  init_options = nil,
  -- Called as on_attach(client, bufnr) when a configuration buffer attaches.
  on_attach = nil,
  -- Client capabilities; nil: vim.lsp.protocol.make_client_capabilities().
  capabilities = nil,
  -- Global keymaps: false (none), true (the defaults below) or a table like them.
  keymaps = false,
  -- List worker sessions (delegated sub-tasks) under their planner in `:Switchman sessions`.
  show_worker_sessions = false,
  chat = {
    -- Where the chat opens: 'right', 'left', 'below', 'above' or 'tab'.
    position = 'right',
    -- Width (or height, for 'below'/'above') as a fraction of the editor, or in columns.
    size = 0.4,
    -- Height of the input area, in lines.
    input_height = 4,
    -- Load the workspace's current session when the chat first opens.
    load_history = true,
    -- Show where the draft will route beside the input as you type.
    preview = true,
    -- Enter insert mode in the input area when the chat opens.
    start_insert = true,
    -- Buffer-local keys in the chat; set one to false to leave it unmapped.
    keymaps = {
      send = { n = { '<CR>', '<C-s>' }, i = '<C-s>' },
      cancel = { n = '<C-c>', i = '<C-c>' },
      close = { n = 'q' },
      why = { n = 'gw' },
      model = { n = 'gm' },
      new_session = { n = 'gn' },
      thumbs_up = { n = 'g+' },
      thumbs_down = { n = 'g-' },
      focus_input = { n = 'i' },
      yank_block = { n = 'gy' },
      apply_block = { n = 'ga' },
    },
  },
  statusline = {
    -- Shown before the model; '' for none.
    prefix = 'Switchman: ',
    -- Shown when no turn has run and no sticky model is set.
    no_model = 'rules',
    sticky = ' [sticky]',
    -- The agent profile in force (%s: its name); false to leave it out.
    profile = ' · %s',
    pending = ' → ',
    busy = ' …',
    banner = ' ⚠ ',
    config_errors = ' ✗ config',
    -- Longest banner text shown (the rest is cut with '…').
    max_banner = 40,
  },
  float = {
    border = 'rounded',
  },
}

--- The global keymaps `keymaps = true` sets.
M.default_keymaps = {
  chat = '<leader>sc',
  model = '<leader>sm',
  why = '<leader>sw',
  sessions = '<leader>ss',
  cancel = '<leader>sx',
}

M.options = vim.deepcopy(M.defaults)

--- Where the chat can open (`chat.position`).
M.positions = { 'right', 'left', 'below', 'above', 'tab' }

--- Options without a default (nil unless given).
local UNSET = { 'python', 'cmd_env', 'config_dir', 'init_options', 'on_attach', 'capabilities' }

--- The names in `given` that `known` has no key for, as `prefix .. name` (`chat.positon`), each
--- with the known name it most likely meant.
local function unknown(given, known, prefix, out)
  for key, value in pairs(type(given) == 'table' and given or {}) do
    local default = known[key]
    local name = prefix .. tostring(key)
    if default == nil and not (prefix == '' and vim.tbl_contains(UNSET, key)) then
      local names = vim.tbl_keys(known)
      if prefix == '' then
        vim.list_extend(names, UNSET)
      end
      table.insert(out, { name, type(key) == 'string' and require('switchman.slips').meant(key, names) or nil })
    elseif type(default) == 'table' and type(value) == 'table' and (key == 'chat' or key == 'statusline' or key == 'float') then
      unknown(value, default, name .. '.', out)
    elseif key == 'keymaps' and prefix == 'chat.' and type(value) == 'table' then
      unknown(value, default, name .. '.', out) -- the chat's key names; their modes are not checked
    end
  end
  return out
end

--- Warn about options `setup()` was given that it does not know (a typo would be ignored
--- without a word: `keymap = true` mapped nothing), and global keymaps naming no subcommand.
local function warn_unknown(opts)
  local found = unknown(opts, M.defaults, '', {})
  if type(opts.keymaps) == 'table' then
    local commands = vim.tbl_map(function(c)
      return c.name
    end, require('switchman.commands').list)
    for name in pairs(opts.keymaps) do
      if not vim.tbl_contains(commands, name) then
        table.insert(found, { 'keymaps.' .. tostring(name),
          type(name) == 'string' and require('switchman.slips').meant(name, commands) or nil })
      end
    end
  end
  table.sort(found, function(a, b)
    return a[1] < b[1]
  end)
  local position = type(opts.chat) == 'table' and opts.chat.position or nil
  if position ~= nil and not vim.tbl_contains(M.positions, position) then
    vim.notify(("Switchman: setup()'s chat.position %s is not one of %s; the chat opens on the right.")
      :format(vim.inspect(position), table.concat(M.positions, ', ')), vim.log.levels.WARN)
  end
  for _, entry in ipairs(found) do
    local hint = entry[2] and (' (did you mean %s?)'):format((entry[1]:gsub('[^.]+$', entry[2]))) or ''
    vim.notify(('Switchman: setup() has no option %s%s; it is ignored (:help switchman-setup).'):format(entry[1], hint),
      vim.log.levels.WARN)
  end
end

--- Whether `list` is a list of strings, the first one not empty.
local function strings(list)
  if type(list) ~= 'table' or type(list[1]) ~= 'string' or list[1] == '' then
    return false
  end
  for _, item in pairs(list) do
    if type(item) ~= 'string' then
      return false
    end
  end
  return true
end

--- Whether `cmd` is a command line (or not given).
local function command_line(cmd)
  return cmd == nil or strings(cmd)
end

--- Whether a chat key option is false (unmapped) or keys by mode: `{ n = 'g+' }`, `{ n = { '<CR>', '<C-s>' } }`.
local function keys_by_mode(modes)
  if modes == false or modes == nil then
    return true
  end
  if type(modes) ~= 'table' then
    return false
  end
  for mode, keys in pairs(modes) do
    if type(mode) ~= 'string' or not strings(type(keys) == 'table' and keys or { keys }) then
      return false
    end
  end
  return true
end

--- Whether `value` is a whole number of at least 1 (or not given).
local function count(value)
  return value == nil or type(value) == 'number' and value >= 1 and value == math.floor(value)
end

--- The chat's sizes and keys of `chat` (setup()'s), each checked: a size it cannot use and a key given as
--- a string raised Lua errors as the chat opened.
local function validate_chat(chat)
  chat = type(chat) == 'table' and chat or {}
  vim.validate({
    ['chat.size'] = { chat.size, function(value)
      return count(value) or type(value) == 'number' and value > 0 and value <= 1
    end, 'a fraction of the editor (such as 0.4) or a number of columns or lines (such as 80)' },
    ['chat.input_height'] = { chat.input_height, count, 'a number of lines (such as 4)' },
  })
  local keymaps = chat.keymaps
  vim.validate({ ['chat.keymaps'] = { keymaps, 'table', true } })
  for name, modes in pairs(keymaps or {}) do
    local default = M.defaults.chat.keymaps[name]
    local example = default and default.n and (type(default.n) == 'table' and default.n[1] or default.n) or 'g+'
    vim.validate({ ['chat.keymaps.' .. tostring(name)] = { modes, keys_by_mode,
      ('false or keys by mode, such as { n = "%s" }'):format(example) } })
  end
end

--- Merge user options over the defaults (deep; lists are replaced, not merged).
function M.apply(opts)
  opts = opts or {}
  warn_unknown(opts)
  vim.validate({
    cmd = { opts.cmd, command_line, 'a list such as { "switchman", "serve" } (the command, then its arguments)' },
    python = { opts.python, 'string', true },
    cmd_env = { opts.cmd_env, 'table', true },
    config_dir = { opts.config_dir, 'string', true },
    root_markers = { opts.root_markers, 'table', true },
    on_attach = { opts.on_attach, 'function', true },
    keymaps = { opts.keymaps, { 'boolean', 'table' }, true },
    capabilities = { opts.capabilities, 'table', true },
    share_max_bytes = { opts.share_max_bytes, 'number', true },
    show_worker_sessions = { opts.show_worker_sessions, 'boolean', true },
    chat = { opts.chat, 'table', true },
    statusline = { opts.statusline, 'table', true },
  })
  validate_chat(opts.chat)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  for _, list in ipairs({ 'cmd', 'root_markers' }) do
    if opts[list] then
      M.options[list] = opts[list]
    end
  end
  return M.options
end

--- The command that starts the daemon.
function M.server_cmd()
  local o = M.options
  if o.python then
    return { o.python, '-m', 'switchman.server.cli', 'serve' }
  end
  return vim.deepcopy(o.cmd)
end

--- A `switchman` command line: the server command up to `serve`, then `args`.
function M.cli_cmd(args)
  local cmd, out = M.server_cmd(), {}
  for _, part in ipairs(cmd) do
    if part == 'serve' then
      break
    end
    table.insert(out, part)
  end
  return vim.list_extend(out, args)
end

--- The command that prints the daemon's version.
function M.version_cmd()
  return M.cli_cmd({ '--version' })
end

--- The global keymaps to set, as {name = lhs}.
function M.keymaps()
  local k = M.options.keymaps
  if k == true then
    return vim.deepcopy(M.default_keymaps)
  elseif type(k) == 'table' then
    local maps = {}
    for name, lhs in pairs(k) do
      if lhs then
        maps[name] = lhs
      end
    end
    return maps
  end
  return {}
end

return M
