--- A worker's handoff envelope (spec 004; `handoff` of `switchman/session`) as transcript lines:
--- who handed what to whom, with which tools, models and limits.
local models = require('switchman.models')

local M = {}

local FROM = { session = 'chosen', workspace = 'workspace default', global = 'global default' }

local function present(v)
  return v ~= nil and v ~= vim.NIL
end

local function profile(p)
  p = type(p) == 'table' and p or {}
  return ('%s (%s)'):format(p.name or '?', FROM[p.resolved_from] or tostring(p.resolved_from))
end

local function tier_models(root, policy)
  local parts = {}
  for _, tier in ipairs({ 'fast', 'balanced', 'deep' }) do
    local model = type(policy.tiers) == 'table' and policy.tiers[tier] or nil
    if present(model) then
      table.insert(parts, ('%s: %s'):format(tier, models.short_name(root, model)))
    end
  end
  local listed = table.concat(parts, ', ')
  if present(policy.profile_model) then
    return models.short_name(root, policy.profile_model) .. ' first; ' .. listed
  end
  return listed
end

--- The worker by the tier it runs on: `balanced worker (deep, capped by the tier floor)` when the floor
--- lowered the one asked for; `deep worker` otherwise and in records from before `worker_tier`.
local function worker(target)
  local asked = target.tier or '?'
  local runs = present(target.worker_tier) and target.worker_tier or asked
  if runs == asked then
    return runs .. ' worker'
  end
  return ('%s worker (%s, capped by the tier floor)'):format(runs, asked)
end

--- The lines (`{ text, hl = … }`) shown at the top of a worker's transcript.
function M.lines(root, envelope)
  local source, target = envelope.source or {}, envelope.target or {}
  local scope, policy = envelope.capability_scope or {}, envelope.model_policy or {}
  local from = envelope.reason == 'user_delegate' and ('you (/delegate), profile ' .. profile(source.profile))
    or ('planner on %s, profile %s'):format(models.short_name(root, source.model) or '?', profile(source.profile))
  local tools = table.concat(scope.tools or {}, ', ')
  if scope.approval == 'read_only' then
    tools = tools .. ' (read-only)'
  end
  if scope.approval_required then
    tools = tools .. ' · approved by you'
  end
  local budget = envelope.budget or {}
  local limits = ('timeout %ss'):format(tostring(budget.timeout_seconds or '?'))
  if present(budget.max_tokens) then
    limits = limits .. (' · max %d output tokens'):format(budget.max_tokens)
  end
  local out = {
    { '## Handoff' },
    { 'From:    ' .. from, hl = 'SwitchmanFooter' },
    { ('To:      %s, profile %s'):format(worker(target), profile(target.profile)), hl = 'SwitchmanFooter' },
    { 'Tools:   ' .. (tools ~= '' and tools or 'none'), hl = 'SwitchmanFooter' },
    { 'Models:  ' .. tier_models(root, policy), hl = 'SwitchmanFooter' },
    { 'Limits:  ' .. limits, hl = 'SwitchmanFooter' },
  }
  if type(scope.dropped_tools) == 'table' and #scope.dropped_tools > 0 then
    table.insert(out, { 'Dropped: ' .. table.concat(scope.dropped_tools, ', '), hl = 'SwitchmanFooter' })
  end
  if type(scope.withheld_tools) == 'table' and next(scope.withheld_tools) ~= nil then
    local names = vim.tbl_keys(scope.withheld_tools)
    table.sort(names)
    local listed = {}
    for _, name in ipairs(names) do
      table.insert(listed, ('%s (%s)'):format(name, tostring(scope.withheld_tools[name])))
    end
    table.insert(out, { 'Withheld: ' .. table.concat(listed, '; '), hl = 'SwitchmanFooter' })
  end
  return out
end

return M
