--- Agent profiles (`switchman/profiles`, `switchman/setProfile`): `:Switchman profile [name]`
--- chooses the profile of the workspace's current session; the statusline shows the one in force.
local client = require('switchman.client')
local protocol = require('switchman.protocol')
local ui = require('switchman.ui')
local workspace = require('switchman.workspace')

local M = {}

local names = {} -- root -> profile names of the last `switchman/profiles` answer (for completion)

local FROM = { session = 'chosen for this session', workspace = "the workspace's default", global = 'the global default' }

local function present(v)
  return v ~= nil and v ~= vim.NIL
end

--- Fetch the workspace's profiles; `on_done(err, result)`.
function M.fetch(root, on_done)
  client.request(root, protocol.request.profiles, { workspace = workspace.uri(root) }, function(err, result)
    if result and type(result.profiles) == 'table' then
      names[root] = vim.tbl_map(function(p)
        return p.name
      end, result.profiles)
    end
    on_done(err, result)
  end)
end

--- Ask for the workspace's profile names in the background (the chat does as it opens, as it asks
--- for the models), so that completion has them at once.
function M.prefetch(root)
  M.fetch(root, function() end)
end

--- The profile names last seen for `root` (nil until they were asked for).
function M.cached(root)
  return names[root]
end

--- The profile names last seen for `root`: from the cache (filled as the chat opened), asked for
--- again in the background; asked for and waited for up to a second when none were seen yet.
function M.completions(root)
  if not client.get(root) then
    return names[root] or {}
  end
  if names[root] then
    M.prefetch(root)
  else
    client.await(function(done)
      M.fetch(root, done)
    end)
  end
  return names[root] or {}
end

--- The longest description shown in the picker, as tasks and titles elsewhere (less in a narrow
--- editor, so that the entry fits on one line; never less than DESCRIPTION_MIN).
local DESCRIPTION_MAX, DESCRIPTION_MIN = 60, 20

--- How a profile reads in the picker: `● reviewer  [user]  Reviews code … · model: haiku · read-only`.
--- A long description is cut with `…`, as VS Code's picker cuts it.
function M.describe(profile, active)
  local policy = type(profile.model_policy) == 'table' and profile.model_policy or {}
  local model = present(policy.model) and policy.model or (present(policy.tier) and ('tier ' .. policy.tier))
    or 'your rules'
  local approval = profile.approval == 'read_only' and ' · read-only' or ''
  local head = ('%s %-12s [%s]  '):format(profile.name == active and '●' or ' ', profile.name, profile.source or '?')
  local tail = ('model: %s%s'):format(model, approval)
  if not present(profile.description) or vim.trim(profile.description) == '' then
    return head .. tail
  end
  -- what is left of the editor's width after the rest of the entry, its ' · ' and the picker's `12: `
  local room = vim.o.columns - vim.fn.strdisplaywidth(head .. tail) - 3 - 5
  local about = ui.clip(vim.trim(profile.description), math.max(DESCRIPTION_MIN, math.min(DESCRIPTION_MAX, room)))
  return head .. about .. ' · ' .. tail
end

--- Where the profile in force was chosen, in words.
function M.origin(active)
  return ('%s (%s)'):format(active.name, FROM[active.resolved_from] or tostring(active.resolved_from))
end

--- Whether `word` given as the profile's name means "clear the choice": `-`, or `clear` in any case
--- (as the chat's `/profile clear`; a profile named so is chosen in the picker).
function M.clears(word)
  return word == '-' or word:lower() == 'clear'
end

--- Set (`name`) or clear (nil) the profile of the workspace's current session.
function M.set(root, name)
  local params = { workspace = workspace.uri(root), profile = name or vim.NIL }
  client.request(root, protocol.request.set_profile, params, function(err, result)
    if err then
      return client.notify_error(err, vim.log.levels.ERROR)
    end
    vim.notify('Switchman: ' .. result.message, vim.log.levels.INFO)
  end)
end

--- `:Switchman profile` without a name: pick one with |vim.ui.select()|.
function M.pick(root)
  M.fetch(root, function(err, result)
    if err then
      return client.notify_error(err, vim.log.levels.ERROR)
    end
    local active = result.active or {}
    local items = vim.deepcopy(result.profiles or {})
    if active.resolved_from == 'session' then
      table.insert(items, 1, { clear = true })
    end
    vim.ui.select(items, {
      prompt = 'Switchman profile (now: ' .. M.origin(active) .. ')',
      kind = 'switchman.profile',
      format_item = function(item)
        return item.clear and '  Use the default profile (clear this session\'s choice)' or M.describe(item, active.name)
      end,
    }, function(choice)
      if choice then
        M.set(root, not choice.clear and choice.name or nil)
      end
    end)
  end)
end

return M
