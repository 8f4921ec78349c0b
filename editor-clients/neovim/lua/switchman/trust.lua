--- `:Switchman trust`: the tools that run without asking in this workspace (`switchman/trust`),
--- and revoking one or all of them (`switchman/revokeTrust`) so Switchman asks again.
local client = require('switchman.client')
local protocol = require('switchman.protocol')
local workspace = require('switchman.workspace')

local M = {}

M.revoke_all = 'Revoke all of them'

--- The choices for the always-allowed `tools`: one per tool, then "all" when there are several.
function M.choices(tools)
  local items = {}
  for _, tool in ipairs(tools) do
    table.insert(items, { label = ('Revoke %s (runs without asking)'):format(tool), tool = tool })
  end
  if #tools > 1 then
    table.insert(items, { label = M.revoke_all, tool = nil })
  end
  return items
end

local function revoke(root, tool)
  local params = { workspace = workspace.uri(root), tool = tool }
  client.request(root, protocol.request.revoke_trust, params, function(err, result)
    if err then
      return client.notify_error(err, vim.log.levels.WARN)
    end
    local revoked = result and result.revoked or {}
    vim.notify(#revoked > 0 and ('Switchman will ask again before: %s'):format(table.concat(revoked, ', '))
      or 'Switchman: nothing was always allowed.', vim.log.levels.INFO)
  end)
end

--- List the always-allowed tools of `root` and revoke the one picked.
function M.pick(root)
  client.request(root, protocol.request.trust, { workspace = workspace.uri(root) }, function(err, result)
    if err then
      return client.notify_error(err, vim.log.levels.WARN)
    end
    local tools = {}
    for _, entry in ipairs(result and result.trusted or {}) do
      vim.list_extend(tools, entry.tools or {})
    end
    if type(result) == 'table' and type(result.problem) == 'string' then
      vim.notify('Switchman: ' .. result.problem, vim.log.levels.WARN) -- trust.json could not be read
    end
    if #tools == 0 then
      return vim.notify('Switchman: no tool is always allowed here; Switchman asks before every change and command.',
        vim.log.levels.INFO)
    end
    vim.ui.select(M.choices(tools), {
      prompt = 'Always allowed in this workspace (pick one to revoke):',
      format_item = function(item)
        return item.label
      end,
    }, function(item)
      if item then
        revoke(root, item.tool)
      end
    end)
  end)
end

return M
