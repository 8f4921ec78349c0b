--- The workspace's state from `switchman/status` notifications, for the statusline.
local client = require('switchman.client')
local config = require('switchman.config')
local models = require('switchman.models')
local protocol = require('switchman.protocol')
local workspace = require('switchman.workspace')

local M = {}

local by_root = {} -- root -> latest status notification
local buffer_roots = {} -- bufnr -> { name, root } (the statusline is drawn often)

local function changed()
  vim.cmd('redrawstatus!')
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'SwitchmanStatus', modeline = false })
end

--- Record a status notification.
function M.update(root, status)
  if not root then
    return
  end
  by_root[root] = status
  if not models.cached(root) then
    models.fetch(root, function()
      changed()
    end)
  end
  changed()
end

--- The latest status of a workspace, or nil.
function M.get(root)
  return by_root[root]
end

--- Forget a workspace's status (its daemon stopped).
function M.clear(root)
  if root then
    by_root[root] = nil
    models.forget(root)
    changed()
  end
end

local function present(v)
  return v ~= nil and v ~= vim.NIL
end

local function truncate(text, max)
  if vim.fn.strchars(text) <= max then
    return text
  end
  return vim.fn.strcharpart(text, 0, max - 1) .. '…'
end

--- The profile worth showing: any but the built-in `default` nobody chose (so a statusline
--- without profiles reads as before).
function M.shown_profile(s)
  local p = type(s.profile) == 'table' and s.profile or nil
  if not p or not present(p.name) then
    return nil
  end
  if p.name == 'default' and p.resolved_from == 'global' then
    return nil
  end
  return p.name
end

--- The `statusline` options of setup(), a piece set to false (or to no text) as '' (`profile = false` is
--- documented; `prefix = false` raised an error at every redraw of the statusline).
local function pieces()
  local o = {}
  for key, value in pairs(config.options.statusline) do
    o[key] = type(value) == 'string' and value or ''
  end
  o.profile = o.profile ~= '' and o.profile or nil
  o.max_banner = tonumber(config.options.statusline.max_banner) or config.defaults.statusline.max_banner
  return o
end

--- The statusline text for a status record.
function M.format(root, s)
  local o = pieces()
  local name = s.sticky_model ~= vim.NIL and s.sticky_model or nil
  name = name or (s.active_model ~= vim.NIL and s.active_model or nil)
  local parts = { o.prefix, models.short_name(root, name) or o.no_model }
  if o.profile and M.shown_profile(s) then
    -- a workspace default bounded by the user's default profile is marked: it has fewer tools than its own
    local bounded = present(s.profile.bounded_by) and ' (bounded)' or ''
    table.insert(parts, o.profile:format(s.profile.name .. bounded))
  end
  if s.sticky_model and s.sticky_model ~= vim.NIL then
    table.insert(parts, o.sticky)
  end
  if type(s.pending_swap) == 'table' then
    local target = s.pending_swap.model ~= vim.NIL and s.pending_swap.model or nil
    table.insert(parts, o.pending .. (models.short_name(root, target) or o.no_model))
  end
  if s.turn_in_flight == true then
    table.insert(parts, o.busy)
  end
  if (tonumber(s.config_errors) or 0) > 0 then
    table.insert(parts, o.config_errors)
  end
  local banners = type(s.banners) == 'table' and s.banners or {}
  if #banners > 0 then
    local more = #banners > 1 and (' (+%d)'):format(#banners - 1) or ''
    -- a file named by its whole path (`/home/me/.config/switchman/routing.yaml has errors; …`)
    -- by its name only: its folders would fill the space, leaving nothing of what is wrong
    local first = banners[1]:gsub('%S+', function(word)
      if word:match('^~?/') and word:find('/[^/]+$') then
        return vim.fn.fnamemodify(word, ':t')
      end
    end)
    table.insert(parts, o.banner .. truncate(first, o.max_banner) .. more)
  end
  return table.concat(parts)
end

local function root_of_buffer(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local cached = buffer_roots[bufnr]
  if cached and cached.name == name then
    return cached.root
  end
  local root = workspace.root_for_buf(bufnr)
  buffer_roots[bufnr] = { name = name, root = root }
  return root
end

--- The statusline text for the current buffer's workspace ('' while its daemon is not running).
function M.statusline()
  local root = root_of_buffer(vim.api.nvim_get_current_buf())
  local s = by_root[root]
  return s and M.format(root, s) or ''
end

--- Today's spend as `:Switchman status` shows it, naming the part Switchman estimated (calls cut
--- short before the provider reported their usage) as `/cost` does:
--- `$0.410000 (of which ~$0.020000 estimated: calls cut short)`, `~$0.020000 (estimated: calls cut
--- short)` when all of it is.
function M.cost_today(s)
  if not present(s.cost_today_usd) then
    return '$-'
  end
  return require('switchman.cost').line(s.cost_today_usd, s.estimated_today_usd,
    { of_which = true, why = ': calls cut short' })
end

--- A few lines describing a workspace's state, for `:Switchman status`.
function M.describe(root)
  local s = by_root[root]
  if not s then
    return { ('Switchman is not running for %s. :Switchman chat starts it.'):format(root) }
  end
  local function show(v)
    return (v == nil or v == vim.NIL) and '-' or tostring(v)
  end
  local pending = type(s.pending_swap) == 'table' and show(s.pending_swap.model) or '-'
  local lines = {
    'Workspace:      ' .. root,
    'Session:        ' .. show(s.session_id),
    'Active model:   ' .. show(s.active_model),
    'Sticky model:   ' .. show(s.sticky_model),
    'Profile:        ' .. (type(s.profile) == 'table' and require('switchman.profiles').origin(s.profile) or '-'),
    'Pending swap:   ' .. pending,
    'Turn running:   ' .. (s.turn_in_flight and 'yes' or 'no'),
    'Cost today:     ' .. M.cost_today(s),
    'Config errors:  ' .. show(s.config_errors),
  }
  local left = type(s.profile) == 'table' and require('switchman.profiles').left(s.profile)
  if left then -- a bounded workspace default: what it is left, under its line
    table.insert(lines, 6, '                ' .. left)
  end
  for _, banner in ipairs(type(s.banners) == 'table' and s.banners or {}) do
    table.insert(lines, '⚠ ' .. banner)
  end
  return lines
end

client.on(protocol.notification.status, M.update)
client.on('exit', function(root, info)
  if not info.replaced then
    M.clear(root)
  end
end)

return M
