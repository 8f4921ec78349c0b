-- :checkhealth switchman finds the daemon, its version and its Python; and says what to do
-- when the daemon is missing.
local H = require('harness')
local config = require('switchman.config')

local function checkhealth()
  vim.cmd('checkhealth switchman')
  local lines = H.lines(0)
  vim.cmd('bwipeout!')
  return lines, table.concat(lines, '\n')
end

local function has_line(lines, pattern)
  for _, line in ipairs(lines) do
    if line:find(pattern) then
      return line
    end
  end
  return nil
end

return {
  {
    ':checkhealth switchman reports OK for the daemon, its version and its Python',
    function()
      local lines, text = checkhealth()
      H.check(not text:find('ERROR', 1, true), 'no errors', lines)
      H.check(has_line(lines, 'OK:? daemon found: .*switchman'), 'the daemon is found', lines)
      H.check(has_line(lines, 'OK:? version: switchman %d+%.%d+%.%d+'), 'its version', lines)
      H.check(has_line(lines, 'OK:? Python 3%.%d+'), 'its Python', lines)
      H.check(has_line(lines, 'OK:? Neovim %d+%.%d+%.%d+: clients start with vim%.lsp%.start'), 'the LSP API',
        lines)
      H.check(has_line(lines, 'OK:? API key set for anthropic, openai'), 'the keys the daemon will find', lines)
    end,
  },
  {
    "with no API key in the daemon's environment it WARNs that nothing can be sent, and how to set one",
    function()
      -- a first run said every check was OK, and the first message found no model to send to
      local before = config.options.cmd_env
      config.options.cmd_env = { ANTHROPIC_API_KEY = '', OPENAI_API_KEY = '' }
      local lines, text = checkhealth()
      config.options.cmd_env = before
      H.check(has_line(lines, 'WARNING:? no API key is set, so no message can be sent: anthropic %(ANTHROPIC_API_KEY%), '
        .. 'openai %(OPENAI_API_KEY%)'), 'the warning', lines)
      H.check(text:find('api_key_file', 1, true), 'how to set one', lines)
    end,
  },
  {
    'a daemon older than the plugin needs is an ERROR saying how to upgrade it, as it was installed',
    function()
      local health = require('switchman.health')
      local needed = health.min_daemon_version
      health.min_daemon_version = '99.0.0'
      local lines, text = checkhealth()
      health.min_daemon_version = needed
      H.check(has_line(lines, 'ERROR:? switchman %S+ is older than this plugin needs %(99%.0%.0%)'), 'the error', lines)
      -- it said "pip install --upgrade switchman", which installs another project (not on PyPI)
      H.check(text:find('`git pull`, then `make`, in the clone it is installed from', 1, true), 'how to upgrade', lines)
    end,
  },
  {
    'a running daemon is listed',
    function()
      vim.cmd('Switchman status')
      vim.cmd('Switchman chat')
      H.wait_for('the daemon to report its status', function()
        return require('switchman').status()
      end)
      local lines = checkhealth()
      H.check(has_line(lines, 'daemon running for ' .. vim.pesc(vim.fn.resolve(vim.env.SWITCHMAN_TEST_WORKSPACE))),
        'the running daemon', lines)
    end,
  },
  {
    'a configuration file with problems is an ERROR (or a WARNING) naming its line; a clean one is OK',
    function()
      -- it listed a broken routing.yaml as an info line among OKs, while no rule of it applied
      local routing = vim.env.SWITCHMAN_CONFIG_DIR .. '/routing.yaml'
      vim.fn.writefile({ 'rules:', '  - name: fast', '    use: nosuchmodel' }, routing)
      local lines = checkhealth()
      vim.fn.delete(routing)
      H.check(has_line(lines, "ERROR:? %S*/routing%.yaml:3:10: Unknown model 'nosuchmodel'"), 'the error, at its line',
        lines)
      lines = checkhealth()
      H.check(has_line(lines, 'OK:? the configuration files have no problems %(switchman rules check%)'), 'clean', lines)
    end,
  },
  {
    'a missing daemon is an ERROR with what to do; :Switchman chat says so too',
    function()
      require('switchman.client').stop()
      config.apply({ cmd = { '/nonexistent/switchman', 'serve' } })
      local lines, text = checkhealth()
      H.check(has_line(lines, 'ERROR:? `/nonexistent/switchman` not found'), 'the error', lines)
      -- from a clone: "pip install switchman" named a PyPI package that is not Switchman
      H.check(text:find('Install Switchman from a clone of its repository', 1, true), 'how to install it', lines)
      H.check(text:find('the daemon was not found (above), so neither is the Python it runs in', 1, true)
        and not text:find('it is not a Python script', 1, true), 'no guess at why its Python is unknown', lines)
      H.check(text:find('so it cannot be asked which keys it would find', 1, true)
        and not text:find('switchman models --json` failed', 1, true), 'no second error for the keys', lines)
      H.notifications = {}
      vim.cmd('Switchman chat')
      local n = H.notifications[1] or {}
      H.eq(vim.log.levels.ERROR, n.level, 'an error notification')
      H.check(n.message:find('cannot start the daemon', 1, true) and n.message:find('setup', 1, true)
        and n.message:find('from a clone of its repository', 1, true), 'an actionable message', n.message)
    end,
  },
  {
    'the help file has valid tags and :help finds the commands',
    function()
      local plugin = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h')
      local copy = vim.fn.tempname()
      vim.fn.mkdir(copy .. '/doc', 'p')
      vim.fn.writefile(vim.fn.readfile(plugin .. '/doc/switchman.txt'), copy .. '/doc/switchman.txt')
      vim.cmd('helptags ' .. vim.fn.fnameescape(copy .. '/doc'))
      H.eq('', vim.v.errmsg, 'no duplicate or broken tags')
      vim.opt.runtimepath:append(copy)
      for _, tag in ipairs({ 'switchman', 'switchman-setup', ':Switchman-model', 'switchman.statusline()',
        'switchman-chat-keys', 'switchman-health' }) do
        vim.cmd('help ' .. vim.fn.escape(tag, ' '))
        H.check(vim.api.nvim_buf_get_name(0):find('switchman.txt$'), ':help ' .. tag)
        vim.cmd('helpclose')
      end
    end,
  },
}
