--- Agent profiles (`switchman/profiles`, `switchman/setProfile`): `:Switchman profile [name]`
--- chooses the profile of the workspace's current session; the statusline shows the one in force.
local client = require('switchman.client')
local protocol = require('switchman.protocol')
local ui = require('switchman.ui')
local workspace = require('switchman.workspace')

local M = {}

local asking = {} -- root -> true while its names are asked for as its daemon starts
local names = {} -- root -> { client = id, list = names } of the last `switchman/profiles` answer (for completion)

local FROM = { session = 'chosen for this session', workspace = "the workspace's default", global = 'the global default' }

local function present(v)
  return v ~= nil and v ~= vim.NIL
end

--- Fetch the workspace's profiles; `on_done(err, result)`. The names are kept for completion, as
--- the daemon that answered knows them.
function M.fetch(root, on_done)
  local asked -- the client asked (an answer of a daemon since stopped is not taken for its successor's)
  client.request(root, protocol.request.profiles, { workspace = workspace.uri(root) }, function(err, result)
    if result and type(result.profiles) == 'table' and asked then
      names[root] = { client = asked.id, list = vim.tbl_map(function(p)
        return p.name
      end, result.profiles) }
    end
    on_done(err, result)
  end)
  asked = client.get(root)
end

--- Ask for the workspace's profile names in the background (as its daemon starts, and as the chat
--- opens), so that completion has them at once.
function M.prefetch(root)
  M.fetch(root, function() end)
end

--- The profile names the workspace's running daemon gave (nil until it answered; nil once it
--- stopped: a daemon started again may read another profiles.yaml).
function M.cached(root)
  local seen, running = names[root], client.get(root)
  return seen and running and seen.client == running.id and seen.list or nil
end

--- Forget the names a stopped daemon gave.
function M.forget(root)
  names[root] = nil
end

--- The profile names for completion, at once (it never waits for the daemon): those the running
--- daemon gave, asked for again in the background (a profile file may have changed since).
function M.completions(root)
  if client.get(root) then
    M.prefetch(root)
  end
  return M.cached(root) or {}
end

--- The longest description shown in the picker, as tasks and titles elsewhere (less in a narrow
--- editor, so that the entry fits on one line; never less than DESCRIPTION_MIN).
local DESCRIPTION_MAX, DESCRIPTION_MIN = 60, 20

--- The shortest a bounded profile's tools are cut to in the picker (`tools: delegate, edit_fi…`).
local TOOLS_MIN = 24

--- A workspace default bounded by the user's global default profile (`bounded_by`), in words; nil
--- when it is not bounded (or the daemon is older).
function M.bound(profile)
  if type(profile) == 'table' and present(profile.bounded_by) then
    return ("bounded by your default '%s'"):format(profile.bounded_by)
  end
end

--- The tools a bounded profile is left, in words (`tools: grep, read_file`).
local function tools_left(profile)
  local tools = type(profile.tools) == 'table' and profile.tools or {}
  return 'tools: ' .. (#tools > 0 and table.concat(tools, ', ') or 'none')
end

--- How a profile reads in the picker: `● reviewer  [user]  Reviews code … · model: haiku · read-only`.
--- A long description is cut with `…`, as VS Code's picker cuts it. A bounded workspace default
--- (its tools and approval being what it is left) ends `· bounded by your default 'reviewer' (tools: …)`.
function M.describe(profile, active)
  local policy = type(profile.model_policy) == 'table' and profile.model_policy or {}
  local model = present(policy.model) and policy.model or (present(policy.tier) and ('tier ' .. policy.tier))
    or 'your rules'
  local approval = profile.approval == 'read_only' and ' · read-only' or ''
  local bound = M.bound(profile)
  local head = ('%s %-12s [%s]  '):format(profile.name == active and '●' or ' ', profile.name, profile.source or '?')
  local described = present(profile.description) and vim.trim(profile.description) ~= ''
  local function tail_with(tools)
    return ('model: %s%s%s'):format(model, approval, bound and (' · %s (%s)'):format(bound, tools) or '')
  end
  local tail = tail_with(bound and tools_left(profile))
  if bound then
    -- the tools it is left take what the editor's width leaves after the rest of the entry (its
    -- description at its shortest, the picker's `12: `), cut with … (never below TOOLS_MIN): a
    -- long list wrapped the entry past the edge. :Switchman status lists them all
    local rest = vim.fn.strdisplaywidth(head .. tail_with('')) + 5 + (described and (DESCRIPTION_MIN + 3) or 0)
    tail = tail_with(ui.clip(tools_left(profile), math.max(TOOLS_MIN, vim.o.columns - rest)))
  end
  if not described then
    return head .. tail
  end
  -- what is left of the editor's width after the rest of the entry, its ' · ' and the picker's `12: `
  local room = vim.o.columns - vim.fn.strdisplaywidth(head .. tail) - 3 - 5
  local about = ui.clip(vim.trim(profile.description), math.max(DESCRIPTION_MIN, math.min(DESCRIPTION_MAX, room)))
  return head .. about .. ' · ' .. tail
end

--- Where the profile in force was chosen, in words, and what bounds it.
function M.origin(active)
  local bound = M.bound(active)
  return ('%s (%s%s)'):format(active.name, FROM[active.resolved_from] or tostring(active.resolved_from),
    bound and (', ' .. bound) or '')
end

--- What a bounded profile in force is left and loses, for `:Switchman status` (nil when not bounded):
--- `tools: grep, read_file · read-only; left out: edit_file, run_command`.
function M.left(active)
  if not M.bound(active) then
    return nil
  end
  local out = type(active.tools_left_out) == 'table' and active.tools_left_out or {}
  return tools_left(active) .. (active.approval == 'read_only' and ' · read-only' or '')
    .. (#out > 0 and ('; left out: ' .. table.concat(out, ', ')) or '')
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

-- The daemon started (its first status) or came back: its profile names are asked for now, so the
-- first `<Tab>` of `:Switchman profile` has them, before the chat ever opened.
client.on(protocol.notification.status, function(root)
  if root and not M.cached(root) and not asking[root] then
    asking[root] = true
    M.fetch(root, function()
      asking[root] = nil
    end)
  end
end)

-- A daemon stopped: the names it gave are not offered (the next may read another profiles.yaml). Those of
-- the root's next daemon (`:Switchman restart` starts it before the old one exits) stay.
client.on('exit', function(root)
  if root and not M.cached(root) then
    asking[root] = nil
    M.forget(root)
  end
end)

return M
