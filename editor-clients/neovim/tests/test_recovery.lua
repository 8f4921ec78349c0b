-- Saved configuration turns the statusline; a crashed daemon is reported once and comes
-- back with :Switchman restart, with its configuration buffers attached again.
local H = require('harness')
local client = require('switchman.client')
local switchman = require('switchman')
local workspace = require('switchman.workspace')

local config_dir = vim.env.SWITCHMAN_CONFIG_DIR
local project = vim.env.SWITCHMAN_TEST_WORKSPACE
local root = workspace.normalize(project)
local routing = project .. '/.switchman/routing.yaml'

local VALID = { 'rules:', '  - name: quick', '    when: {message_matches: "quick"}', '    use: haiku' }
local BROKEN = { 'rules:', '  - name: fast', '    when: {message_matches: "commit"}', '    use: nosuchmodel' }

local exits = {}
client.on('exit', function(r, info)
  table.insert(exits, { root = r, info = info })
end)

local function write(path, lines)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  vim.fn.writefile(lines, path)
end

local function statusline()
  local win = vim.fn.bufwinid(vim.fn.bufnr(routing))
  return vim.api.nvim_win_call(win, switchman.statusline)
end

local function wait_statusline(what, check)
  return H.wait_for(what, function()
    return check(statusline())
  end, nil, statusline)
end

local function wait_diagnostic(bufnr, needle)
  return H.wait_for(('a diagnostic naming %s'):format(needle), function()
    local found = vim.diagnostic.get(bufnr)[1]
    return found and found.message:find(needle, 1, true) and found
  end, nil, function()
    return vim.diagnostic.get(bufnr)
  end)
end

local function daemon_messages()
  return vim.tbl_filter(function(n)
    return n.message:find('Switchman: daemon for', 1, true) or n.message:find('quit with exit code', 1, true)
  end, H.notifications)
end

local bufnr

return {
  {
    "saving a broken routing.yaml turns the statusline red without a chat turn; fixing it clears it",
    function()
      write(routing, VALID)
      vim.cmd('edit ' .. vim.fn.fnameescape(routing))
      bufnr = vim.api.nvim_get_current_buf()
      wait_statusline('the workspace status', function(s)
        return s == 'Switchman: rules'
      end)
      write(config_dir .. '/routing.yaml', BROKEN)
      wait_statusline('the configuration error in the statusline', function(s)
        return s:find('✗ config', 1, true)
      end)
      write(config_dir .. '/routing.yaml', { 'rules: []' })
      wait_statusline('the error to clear', function(s)
        return s == 'Switchman: rules'
      end)
    end,
  },
  {
    'a daemon crash is said once, in one line, and Neovim adds no second report',
    function()
      vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, BROKEN) -- unsaved
      wait_diagnostic(bufnr, 'nosuchmodel')
      local pids = H.child_pids('switchman serve')
      H.eq(1, #pids, 'one daemon')
      H.notifications = {}
      local notify = vim.notify
      vim.loop.kill(pids[1], 'sigkill')
      H.wait_for('the crash report, and Neovim\'s own dropped', function()
        return #daemon_messages() >= 1 and vim.notify == notify
      end, nil, daemon_messages)
      local messages = daemon_messages()
      H.eq(1, #messages, 'one message', messages)
      H.check(messages[1].message:find(':Switchman restart', 1, true), 'says what to do', messages)
      H.check(vim.fn.strdisplaywidth(messages[1].message) < vim.o.columns, 'fits on the command line',
        messages[1].message)
      H.eq(vim.log.levels.ERROR, messages[1].level)
      H.eq('', statusline(), 'no status without a daemon')
    end,
  },
  {
    ':Switchman restart after a crash starts the daemon and re-sends the unsaved buffer',
    function()
      H.eq(nil, client.get(root), 'no client after the crash')
      vim.cmd('Switchman restart')
      H.check(client.get(root), 'a client again')
      H.wait_for('the buffer to be attached again', function()
        return #H.buf_clients(bufnr) == 1
      end)
      wait_diagnostic(bufnr, 'nosuchmodel')
      wait_statusline('the status again', function(s)
        return s ~= ''
      end)
    end,
  },
  {
    'a restart keeps the status and the aliases (the old daemon exits after the new one started)',
    function()
      exits = {}
      vim.cmd('Switchman restart')
      H.wait_for('the old daemon to exit', function()
        return #exits == 1
      end)
      H.eq(true, exits[1].info.replaced, 'the root had its next client already')
      wait_statusline('the status of the new daemon', function(s)
        return s:find('^Switchman: rules')
      end)
      vim.cmd('Switchman chat a quick question')
      local chat = require('switchman.chat').get(root)
      H.wait_text(chat.view.transcript, '## Switchman [haiku · rule: quick]', 30000)
    end,
  },
  {
    'a daemon killed while it asks for an approval: the question and its diff tab go away',
    function()
      local chat = require('switchman.chat').get(root)
      H.wait_for('the last turn to end', function()
        return chat.turn == nil
      end)
      H.fake('POST', '/_fake/reset')
      H.script({
        { kind = 'tool_call', tool_calls = { { name = 'edit_file', id = 'toolu_killed',
          input = { path = 'src/app.py', old_text = 'return 42', new_text = 'return 43' } } } },
        { kind = 'text', chunks = { 'Unused.' } },
      })
      local approval = require('switchman.approval')
      approval.wait_ms = 30000 -- without the withdrawal the question would stay this long
      local asked = false
      vim.ui.select = function() -- an asynchronous picker: the user has not chosen yet
        asked = true
        vim.schedule(function()
          vim.loop.kill(H.child_pids('switchman serve')[1], 'sigkill')
        end)
      end
      H.notifications = {}
      local started = vim.loop.now()
      vim.cmd('Switchman chat change main to return 43')
      H.wait_for('the question to be asked and withdrawn', function()
        return asked and #vim.api.nvim_list_tabpages() == 1 and vim.tbl_filter(function(n)
          return n.message:find('daemon stopped before you answered', 1, true) ~= nil
        end, H.notifications)[1]
      end, 25000, function()
        return { asked = asked, tabs = #vim.api.nvim_list_tabpages(), notes = H.notifications }
      end)
      H.check(vim.loop.now() - started < 25000, 'at once, not after the wait')
    end,
  },
}
