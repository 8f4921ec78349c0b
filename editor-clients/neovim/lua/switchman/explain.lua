--- "Why this model?" (`switchman/explain`) and the routing rules (`/rules check`, `/rules show`).
local client = require('switchman.client')
local protocol = require('switchman.protocol')
local render = require('switchman.render')
local ui = require('switchman.ui')
local workspace = require('switchman.workspace')

local M = {}

local function fail(err)
  client.notify_error(err, vim.log.levels.ERROR)
end

--- Show the full routing explanation of the last turn of the workspace's current session.
function M.why(root)
  client.request(root, protocol.request.explain, { workspace = workspace.uri(root) }, function(err, result)
    if err then
      return fail(err)
    end
    if not result.text or result.text == vim.NIL then
      return vim.notify('Switchman: no turn yet in this session, so nothing to explain.', vim.log.levels.INFO)
    end
    ui.float(render.lines(result.text), { title = 'Why this model?', filetype = 'switchman_why' })
  end)
end

local RULES = {
  check = { '/rules check' },
  show = { '/rules show' },
  reload = { '/rules reload' },
}
RULES.all = { RULES.check[1], RULES.show[1] }

--- The `/rules` subcommands `:Switchman rules` accepts.
M.rules_actions = { 'check', 'show', 'reload' }

local function run_commands(root, commands, answers, on_done)
  if #answers == #commands then
    return on_done(answers)
  end
  local command = commands[#answers + 1]
  local params = { workspace = workspace.uri(root), message = command }
  client.request(root, protocol.request.chat, params, function(err, result)
    table.insert(answers, { command = command, err = err, text = result and result.text or nil })
    run_commands(root, commands, answers, on_done)
  end)
end

--- Run `/rules check` and `/rules show` (or just `action`) and show the answers in a scratch buffer.
function M.rules(root, action)
  local commands = RULES[action or 'all']
  if not commands or action == 'all' then
    return vim.notify(('Switchman: unknown rules action %q (check, show or reload).'):format(action), vim.log.levels.ERROR)
  end
  run_commands(root, commands, {}, function(answers)
    local entries = {}
    for _, answer in ipairs(answers) do
      if #entries > 0 then
        table.insert(entries, { '' })
      end
      table.insert(entries, { '## ' .. answer.command, hl = 'SwitchmanUser' })
      if answer.err then
        vim.list_extend(entries, render.rpc_error(answer.err))
      else
        vim.list_extend(entries, render.lines(answer.text or ''))
      end
    end
    ui.scratch('switchman://rules/' .. vim.fn.fnamemodify(root, ':t'), entries, { root = root, filetype = 'switchman_rules' })
  end)
end

return M
