--- The model registry as the daemon reports it (`switchman/models`), short names for
--- display, and choosing the sticky model (`switchman/setModel`).
local client = require('switchman.client')
local protocol = require('switchman.protocol')
local workspace = require('switchman.workspace')

local M = {}

local cache = {} -- root -> last `switchman/models` result
local asking = {} -- root -> true while completion's background request for the list is out

--- Fetch the models of a workspace; `on_done(err, result)`.
function M.fetch(root, on_done)
  client.request(root, protocol.request.models, { workspace = workspace.uri(root) }, function(err, result)
    if result then
      cache[root] = result
    end
    if on_done then
      on_done(err, result)
    end
  end)
end

--- The cached model list of a workspace (may be nil until fetched).
function M.cached(root)
  return cache[root]
end

--- Forget what was cached (the daemon restarted, or the configuration changed).
function M.forget(root)
  cache[root] = nil
  asking[root] = nil -- a request to a daemon that stopped may never be answered
end

--- A short display name: the model's first alias, else its id without the provider.
function M.short_name(root, id)
  if not id then
    return nil
  end
  for _, model in ipairs((cache[root] or {}).models or {}) do
    if model.id == id and model.aliases and model.aliases[1] then
      return model.aliases[1]
    end
  end
  return (id:gsub('^[^:]+:', ''))
end

--- `M.short_name` where the workspace is not known (a question, a stored record): the alias any
--- workspace's cached list gives the model (the models are the user's, alike in every workspace).
function M.any_short_name(id)
  for root in pairs(cache) do
    local name = M.short_name(root, id)
    if name ~= (id:gsub('^[^:]+:', '')) then
      return name
    end
  end
  return M.short_name(nil, id)
end

--- How a model reads in the picker: alias, id, tier and whether it can be used. `widths`
--- ({ alias, id }) aligns the columns.
function M.describe(model, sticky, widths)
  widths = widths or { alias = 8, id = 30 }
  local state
  if not model.configured then
    state = 'no API key'
  elseif model.availability ~= 'healthy' then
    state = model.availability
  else
    state = 'ready'
  end
  local alias = model.aliases and model.aliases[1] or ''
  local line = ('%s %-' .. widths.alias .. 's  %-' .. widths.id .. 's  %-9s %s')
  return line:format(model.id == sticky and '●' or ' ', alias, model.id, model.tier or '', state)
end

local function column_widths(list)
  local widths = { alias = 1, id = 1 }
  for _, model in ipairs(list) do
    widths.alias = math.max(widths.alias, #((model.aliases or {})[1] or ''))
    widths.id = math.max(widths.id, #model.id)
  end
  return widths
end

--- The picker's first entry, which clears the sticky model.
local FOLLOW_RULES = 'Follow the rules'

--- What to say once a model is set: how to undo it in Neovim's terms (the daemon's message does
--- not know whether :Switchman model or its picker set it).
local function message(result)
  if result.outcome == 'applied' and type(result.sticky_model) == 'string' then
    return ('Sticky model set: %s. Your rules are skipped until you run :Switchman model - (or choose "%s" in '
      .. ':Switchman model).'):format(result.sticky_model, FOLLOW_RULES)
  end
  return result.message
end

local function report(err, result)
  if err then
    client.notify_error(err, vim.log.levels.ERROR)
  elseif result and result.message then
    vim.notify('Switchman: ' .. message(result), vim.log.levels.INFO)
  end
end

--- Set (a model id or alias) or clear (nil) the sticky model of the workspace's current session.
function M.set(root, model, on_done)
  local params = { workspace = workspace.uri(root), model = model or vim.NIL }
  client.request(root, protocol.request.set_model, params, function(err, result)
    report(err, result)
    if on_done then
      on_done(err, result)
    end
  end)
end

local CLEAR = { clear = true }

--- Pick the sticky model with `vim.ui.select` (first entry: follow the rules again).
function M.pick(root)
  M.fetch(root, function(err, result)
    if err then
      return report(err)
    end
    local items = { CLEAR }
    vim.list_extend(items, result.models or {})
    local widths = column_widths(result.models or {})
    local sticky = result.sticky_model ~= vim.NIL and result.sticky_model or nil
    vim.ui.select(items, {
      prompt = 'Switchman model for this session',
      kind = 'switchman.model',
      format_item = function(item)
        if item.clear then
          return (sticky and '  ' or '● ') .. FOLLOW_RULES .. ' (no sticky model)'
        end
        return M.describe(item, sticky, widths)
      end,
    }, function(choice)
      if choice then
        M.set(root, not choice.clear and choice.id or nil)
      end
    end)
  end)
end

--- Model ids and aliases for command-line completion, at once (it never waits for the daemon): `-`
--- and the cached list; when none is cached yet, it is asked for in the background, for the next
--- `<Tab>` (completion waited up to a second for it, the editor blocked).
function M.completions(root)
  local names = { '-' }
  local result = cache[root]
  if not result and client.get(root) and not asking[root] then
    asking[root] = true
    M.fetch(root, function()
      asking[root] = nil
    end)
  end
  for _, model in ipairs((result or {}).models or {}) do
    vim.list_extend(names, model.aliases or {})
    table.insert(names, model.id)
  end
  return names
end

return M
