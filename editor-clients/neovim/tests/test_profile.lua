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
      require('switchman.models').forget(root) -- as after a change of models.yaml
      completions = vim.fn.getcompletion('Switchman model ', 'cmdline')
      H.check(vim.tbl_contains(completions, 'haiku'), 'the models too (it completed only "-")', completions)
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
}
