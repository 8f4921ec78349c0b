-- :Switchman profile: pick or name the session's agent profile; the statusline shows it, and
-- :Switchman delegate completes profile names.
local H = require('harness')
local switchman = require('switchman')
local workspace = require('switchman.workspace')

local root = workspace.normalize(vim.env.SWITCHMAN_TEST_WORKSPACE)

local function wait_statusline(expected)
  return H.wait_for(('statusline() == %q'):format(expected), function()
    return switchman.statusline() == expected
  end, 40000, function()
    return switchman.statusline()
  end)
end

local function last_notification()
  return (H.notifications[#H.notifications] or {}).message
end

return {
  {
    'the profile names are asked for as the daemon starts: <Tab> before the chat ever opened completes them at once',
    function()
      local client, profiles = require('switchman.client'), require('switchman.profiles')
      vim.cmd('edit ' .. root .. '/src/app.py')
      client.ensure(root) -- as opening one of the workspace's configuration files does: no chat yet
      H.wait_for('the profile names (asked for as the daemon started)', function()
        return profiles.cached(root)
      end)
      local await, waited = client.await, 0
      client.await = function() -- a daemon slow to answer: completion waited up to a second
        waited = waited + 1
      end
      local completions = vim.fn.getcompletion('Switchman profile ', 'cmdline')
      client.await = await
      H.check(vim.tbl_contains(completions, 'subagent'), 'the profiles complete', completions)
      H.eq(0, waited, 'completion did not wait for the daemon')
      H.eq(nil, require('switchman.chat').get(root), 'the chat never opened')
    end,
  },
  {
    'names not known yet: <Tab> answers at once with none and asks for them in the background',
    function()
      local client, profiles = require('switchman.client'), require('switchman.profiles')
      profiles.forget(root)
      local await, waited = client.await, 0
      client.await = function()
        waited = waited + 1
      end
      local completions = vim.fn.getcompletion('Switchman profile ', 'cmdline')
      client.await = await
      H.eq({}, completions, 'nothing known, nothing offered')
      H.eq(0, waited, 'completion did not wait for the daemon (it blocked the editor up to a second)')
      H.wait_for('the names, asked for in the background', function()
        return profiles.cached(root)
      end)
    end,
  },
  {
    'the built-in default profile nobody chose is not shown',
    function()
      vim.cmd('edit ' .. root .. '/src/app.py')
      vim.cmd('Switchman chat')
      wait_statusline('Switchman: rules')
    end,
  },
  {
    'the profile names are asked for as the chat opens: <Tab> completes them without waiting',
    function()
      local client, profiles = require('switchman.client'), require('switchman.profiles')
      H.wait_for('the profile names (asked for as the chat opened)', function()
        return profiles.cached(root)
      end)
      local await, fetch, waited, refreshed = client.await, profiles.fetch, 0, 0
      client.await = function() -- a daemon slow to answer: completion got nothing while it waited
        waited = waited + 1
      end
      profiles.fetch = function(...)
        refreshed = refreshed + 1
        return fetch(...)
      end
      local completions = vim.fn.getcompletion('Switchman profile ', 'cmdline')
      client.await, profiles.fetch = await, fetch
      H.check(vim.tbl_contains(completions, 'subagent'), 'the profiles complete from what was asked for', completions)
      H.check(waited == 0, 'completion did not wait for the daemon', waited)
      H.check(refreshed == 1, 'it asks again in the background (a profile file may have changed)', refreshed)
    end,
  },
  {
    'the first <Tab> after :Switchman profile completes the profile names (they are asked for at once)',
    function()
      local completions = vim.fn.getcompletion('Switchman profile ', 'cmdline')
      H.check(vim.tbl_contains(completions, 'subagent') and vim.tbl_contains(completions, 'default'),
        'the profiles, though none was asked for before (it completed nothing)', completions)
    end,
  },
  {
    'models not known yet: :Switchman model <Tab> answers at once and asks for them in the background',
    function()
      local client, models = require('switchman.client'), require('switchman.models')
      models.forget(root) -- as after a change of models.yaml
      local await, waited = client.await, 0
      client.await = function() -- a daemon slow to answer: completion blocked the editor up to a second
        waited = waited + 1
      end
      local completions = vim.fn.getcompletion('Switchman model ', 'cmdline')
      client.await = await
      H.eq(0, waited, 'completion did not wait for the daemon')
      H.eq({ '-' }, completions, 'what is known: clearing the sticky model')
      H.wait_for('the models, asked for in the background', function()
        return models.cached(root)
      end)
      completions = vim.fn.getcompletion('Switchman model ', 'cmdline')
      H.check(vim.tbl_contains(completions, 'haiku'), 'the next <Tab> completes the models', completions)
    end,
  },
  {
    ':Switchman profile (no argument) picks a profile; the statusline shows it',
    function()
      local labels = H.stub_select(function(item)
        return type(item) == 'table' and item.name == 'subagent'
      end)
      vim.cmd('Switchman profile')
      wait_statusline('Switchman: rules · subagent')
      H.check(labels[1]:find('● default', 1, true) and labels[1]:find('[builtin]', 1, true),
        'the profile in force is marked, with where it comes from', labels)
      H.check(last_notification():find('subagent', 1, true), 'the daemon says so', H.notifications)
      local lines = require('switchman.status').describe(root)
      H.check(vim.tbl_contains(lines, 'Profile:        subagent (chosen for this session)'), ':Switchman status names it',
        lines)
    end,
  },
  {
    ':Switchman delegate completes tiers and profiles; an unknown profile is refused',
    function()
      local completions = vim.fn.getcompletion('Switchman delegate ', 'cmdline')
      H.check(vim.tbl_contains(completions, 'fast') and vim.tbl_contains(completions, 'subagent'), 'tiers and profiles',
        completions)
      vim.cmd('Switchman profile nosuch')
      H.wait_for('the refusal', function()
        local last = last_notification() or ''
        return last:find('nosuch', 1, true) ~= nil
      end, nil, H.notifications)
      H.eq('Switchman: rules · subagent', switchman.statusline(), 'nothing changed')
    end,
  },
  {
    ':Switchman profile - goes back to the default',
    function()
      vim.cmd('Switchman profile -')
      wait_statusline('Switchman: rules')
    end,
  },
  {
    ':Switchman profile CLEAR (clear in any case) goes back to the default too',
    function()
      vim.cmd('Switchman profile subagent')
      wait_statusline('Switchman: rules · subagent')
      vim.cmd('Switchman profile CLEAR')
      wait_statusline('Switchman: rules')
      H.check(last_notification():find('Session profile cleared', 1, true), 'the daemon says so', H.notifications)
    end,
  },
  {
    'a stopped daemon\'s profile names are not offered; a restarted one is asked for its own (another profiles.yaml)',
    function()
      local client, profiles = require('switchman.client'), require('switchman.profiles')
      local folder = root .. '/.switchman'
      vim.fn.mkdir(folder, 'p')
      local function profiles_yaml(name)
        vim.fn.writefile({ 'profiles:', '  ' .. name .. ':', '    description: a profile of the workspace' },
          folder .. '/profiles.yaml')
      end
      local function cached_has(name)
        return function()
          return vim.tbl_contains(profiles.cached(root) or {}, name)
        end
      end
      profiles_yaml('alpha')
      profiles.prefetch(root)
      H.wait_for('the workspace profile alpha', cached_has('alpha'), nil, function()
        return profiles.cached(root)
      end)
      local stopped = client.stop(root)[root]
      H.check(stopped, 'the daemon was running')
      H.wait_for('the daemon to exit', function()
        return client.call(stopped, 'is_stopped')
      end)
      local completions = vim.fn.getcompletion('Switchman profile ', 'cmdline')
      H.check(not vim.tbl_contains(completions, 'alpha'), 'the stopped daemon\'s names are not offered', completions)
      profiles_yaml('beta')
      vim.cmd('Switchman restart')
      H.wait_for('the new daemon\'s names, without a <Tab>', cached_has('beta'), nil, function()
        return profiles.cached(root)
      end)
      completions = vim.fn.getcompletion('Switchman profile ', 'cmdline')
      H.check(vim.tbl_contains(completions, 'beta') and not vim.tbl_contains(completions, 'alpha'),
        'the first <Tab> offers the new names only', completions)
      vim.fn.delete(folder, 'rf')
    end,
  },
  {
    'a workspace default bounded by your default profile is marked: statusline, :Switchman status, the picker',
    function()
      -- `default: default` in the repository, your own default a read-only reviewer: the session
      -- has two tools, where the statusline named `default` alone and the picker showed no bound
      local user_file = vim.env.SWITCHMAN_CONFIG_DIR .. '/profiles.yaml'
      vim.fn.writefile({ 'default: reviewer', 'profiles:', '  reviewer:', '    tools: [read_file, grep]',
        '    approval: read_only' }, user_file)
      local folder = root .. '/.switchman'
      vim.fn.mkdir(folder, 'p')
      vim.fn.writefile({ 'default: default' }, folder .. '/profiles.yaml')
      vim.cmd('Switchman restart')
      wait_statusline('Switchman: rules · default (bounded)')
      local lines = require('switchman.status').describe(root)
      H.eq("Profile:        default (the workspace's default, bounded by your default 'reviewer')", lines[5],
        ':Switchman status names the bound')
      H.check(lines[6]:find('tools: grep, read_file · read-only; left out: create_file, delegate,', 1, true),
        'and what the session is left and loses', lines)
      local labels = H.stub_select(function(item)
        return type(item) == 'table' and item.name == 'default'
      end)
      vim.cmd('Switchman profile')
      -- chosen in the session, the same profile is your own choice: not bounded
      wait_statusline('Switchman: rules · default')
      H.check(labels[1]:find('● default', 1, true)
        and labels[1]:find("read-only · bounded by your default 'reviewer' (tools: grep, read_file)", 1, true),
        'the picker shows the tools and approval it is left, and the bound', labels)
      H.check(labels[2]:find('reviewer', 1, true) and not labels[2]:find('bounded', 1, true),
        'the other profiles are shown as they are', labels)
      vim.cmd('Switchman profile -')
      wait_statusline('Switchman: rules · default (bounded)')
      H.wait_for('the daemon says it is bounded again', function()
        return (last_notification() or ''):find("bounded by your default 'reviewer'", 1, true) ~= nil
      end, nil, H.notifications)
      vim.fn.delete(folder, 'rf')
      vim.fn.delete(user_file)
    end,
  },
}
