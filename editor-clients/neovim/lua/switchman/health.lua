--- `:checkhealth switchman`: the daemon, its version, its Python, Neovim's LSP support, the configuration files' problems, API keys.
local config = require('switchman.config')

local M = {}

--- The oldest daemon whose protocol this plugin speaks.
M.min_daemon_version = '0.1.0'
--- The oldest Python Switchman runs on.
M.min_python = { 3, 11 }

-- Neovim 0.7/0.8 report with require('health').report_*; 0.9+ with vim.health.*.
local h = vim.health or require('health')
local start = h.start or h.report_start
local ok = h.ok or h.report_ok
local info = h.info or h.report_info
local warn = h.warn or h.report_warn
local report_error = h.error or h.report_error

local function run(cmd)
  local okay, output = pcall(vim.fn.system, cmd)
  if not okay then
    return nil, tostring(output)
  end
  output = vim.trim(output)
  if vim.v.shell_error ~= 0 then
    return nil, output
  end
  return output
end

local function version_numbers(text)
  local numbers = {}
  for n in (text or ''):gmatch('%d+') do
    table.insert(numbers, tonumber(n))
  end
  return numbers
end

--- True when version `a` (a list of numbers) is at least `b`.
local function at_least(a, b)
  for i = 1, #b do
    local x, y = a[i] or 0, b[i]
    if x ~= y then
      return x > y
    end
  end
  return true
end

--- The Python that runs the daemon: `python` of setup(), the command itself, or its shebang.
function M.python_of(cmd, executable)
  if config.options.python then
    return vim.fn.exepath(config.options.python) ~= '' and vim.fn.exepath(config.options.python) or config.options.python
  end
  if vim.fn.fnamemodify(cmd[1], ':t'):match('^python') then
    return executable
  end
  local file = io.open(executable, 'r')
  local first = file and file:read('*l') or ''
  if file then
    file:close()
  end
  local interpreter = first:match('^#!%s*(.-)%s*$')
  if not interpreter then
    return nil
  end
  local env_target = interpreter:match('^%S*/env%s+(%S+)')
  if env_target then
    return vim.fn.exepath(env_target) ~= '' and vim.fn.exepath(env_target) or env_target
  end
  return interpreter:match('^(%S+)')
end

local function check_daemon()
  start('Switchman daemon')
  local cmd = config.server_cmd()
  local executable = vim.fn.exepath(cmd[1])
  if executable == '' then
    report_error(('`%s` not found: the daemon cannot start'):format(cmd[1]), {
      'Install Switchman from a clone of its repository: `make` there makes .venv/bin/switchman (it is not on '
        .. 'PyPI: `pip install switchman` would not get it)',
      "Or point the plugin at it: require('switchman').setup({ cmd = { '/path/to/switchman', 'serve' } })",
      "Or name the Python it is installed in: require('switchman').setup({ python = '/path/to/python' })",
    })
    return nil
  end
  ok(('daemon found: %s (started as `%s`)'):format(executable, table.concat(cmd, ' ')))
  local output, problem = run(config.version_cmd())
  if not output then
    report_error(('`%s` failed: %s'):format(table.concat(config.version_cmd(), ' '), problem or '?'),
      { 'Run it in a shell to see why; reinstall Switchman if it cannot start' })
  elseif not output:match('^switchman ') then
    warn(('unexpected version output: %s'):format(output))
  elseif not at_least(version_numbers(output), version_numbers(M.min_daemon_version)) then
    report_error(('%s is older than this plugin needs (%s)'):format(output, M.min_daemon_version),
      { 'Upgrade Switchman: `git pull`, then `make`, in the clone it is installed from (it is not on PyPI: '
        .. '`pip install --upgrade switchman` would not get it)' })
  else
    ok(('version: %s'):format(output))
  end
  return executable
end

local function check_python(executable)
  start('Python')
  if not executable then
    info('the daemon was not found (above), so neither is the Python it runs in')
    return
  end
  local python = M.python_of(config.server_cmd(), executable)
  if not python then
    info('could not tell which Python runs the daemon (it is not a Python script)')
    return
  end
  local output, problem = run({ python, '--version' })
  if not output then
    report_error(('`%s --version` failed: %s'):format(python, problem or '?'))
  elseif not at_least(version_numbers(output), M.min_python) then
    report_error(('%s (%s) is too old: Switchman needs Python %d.%d or newer'):format(output, python, M.min_python[1],
      M.min_python[2]))
  else
    ok(('%s (%s)'):format(output, python))
  end
end

local function check_neovim()
  start('Neovim')
  local v = vim.version()
  local version = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.lsp.start then
    ok(('Neovim %s: clients start with vim.lsp.start'):format(version))
  else
    ok(('Neovim %s: clients start with vim.lsp.start_client (vim.lsp.start needs 0.8)'):format(version))
  end
end

local function check_setup()
  start('Configuration')
  local workspace = require('switchman.workspace')
  local dir = workspace.config_dir()
  info('config folder: ' .. dir .. (vim.fn.isdirectory(dir) == 1 and '' or ' (does not exist yet: built-in defaults apply)'))
  for _, name in ipairs({ 'routing.yaml', 'models.yaml' }) do
    if vim.fn.filereadable(dir .. '/' .. name) == 1 then
      info(name .. ': ' .. dir .. '/' .. name)
    end
  end
  local running = require('switchman.client').all()
  if next(running) == nil then
    info('no daemon running in this Neovim yet (:Switchman chat or opening routing.yaml starts one)')
  end
  for root, client in pairs(running) do
    ok(('daemon running for %s (client %d)'):format(root, client.id))
  end
end

--- `cmd` run with the daemon's environment (`cmd_env`, `config_dir`), through `env`.
local function as_daemon(cmd)
  local extra = require('switchman.client').daemon_env()
  if not extra then
    return cmd
  end
  local out = { 'env' }
  for name, value in pairs(extra) do
    table.insert(out, name .. '=' .. tostring(value))
  end
  return vim.list_extend(out, cmd)
end

--- The problems `switchman rules check` finds in the configuration files (the user's and each workspace's:
--- the running daemons', else the current folder's), one line each: an error is an ERROR, a warning a
--- WARNING; a broken routing.yaml was listed among OKs while none of its rules applied.
local function check_files(executable)
  if not executable then
    return
  end
  local roots = vim.tbl_keys(require('switchman.client').all())
  if #roots == 0 then
    roots = { require('switchman.workspace').root_for_path(vim.fn.getcwd()) }
  end
  table.sort(roots)
  local seen, problems = {}, 0
  for _, root in ipairs(roots) do
    local cmd = as_daemon(config.cli_cmd({ 'rules', 'check', '--json', '--workspace', root }))
    local okay, output = pcall(vim.fn.system, cmd) -- it exits 1 when it finds an error
    local decoded, found = pcall(vim.fn.json_decode, okay and output or '')
    if not decoded or type(found) ~= 'table' then
      warn(('`switchman rules check --json` failed: %s'):format(vim.trim(tostring(output))))
      return
    end
    for _, problem in ipairs(found) do
      local start_at = type(problem.range) == 'table' and problem.range.start or {}
      local line = ('%s:%d:%d: %s'):format(vim.fn.fnamemodify(tostring(problem.file), ':~'), (start_at.line or 0) + 1,
        (start_at.character or 0) + 1, tostring(problem.message))
      local report = ({ error = report_error, warning = warn })[problem.severity]
      if report and not seen[line] then
        seen[line], problems = true, problems + 1
        report(line, { ':Switchman rules check lists them; opening the file shows each at its place' })
      end
    end
  end
  if problems == 0 then
    ok('the configuration files have no problems (switchman rules check)')
  end
end

--- Which providers the daemon will find a key for (`switchman models --json`, in its environment):
--- without any, every check above is OK and still no message can be sent.
local function check_keys(executable)
  start('API keys')
  if not executable then
    return info('the daemon was not found (above), so it cannot be asked which keys it would find')
  end
  local output, problem = run(as_daemon(config.cli_cmd({ 'models', '--json' })))
  local okay, listed = pcall(vim.fn.json_decode, output or '')
  if not output or not okay or type(listed) ~= 'table' then
    return warn(('`switchman models --json` failed: %s'):format(problem or tostring(output)))
  end
  local with, without, seen = {}, {}, {}
  for _, model in ipairs(listed) do
    if type(model) == 'table' and type(model.provider) == 'string' and not seen[model.provider] then
      seen[model.provider] = true
      if model.configured == true then
        table.insert(with, model.provider)
      else
        local key = type(model.missing_key) == 'string' and model.missing_key or model.key_source
        table.insert(without, type(key) == 'string' and ('%s (%s)'):format(model.provider, key) or model.provider)
      end
    end
  end
  if #with > 0 then
    ok('API key set for ' .. table.concat(with, ', '))
  end
  if #without > 0 and #with > 0 then
    info('no API key for ' .. table.concat(without, ', ') .. ': its models are not used')
  elseif #without > 0 then
    warn('no API key is set, so no message can be sent: ' .. table.concat(without, ', '), {
      'Set it in the environment Neovim is started from (your shell profile), or in setup({ cmd_env = … })',
      'or keep each key in a file only you can read and name it with api_key_file in models.yaml',
      '`switchman models` shows which providers have a key',
    })
  end
end

--- Entry point of `:checkhealth switchman`.
function M.check()
  local executable = check_daemon()
  check_python(executable)
  check_neovim()
  check_setup()
  check_files(executable)
  check_keys(executable)
end

return M
