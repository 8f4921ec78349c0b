--- switchman.nvim: Switchman's chat, model routing and configuration checks in Neovim.
---
--- The daemon (`switchman serve`) does all routing and keeps the sessions; this plugin
--- only speaks its protocol (docs/protocol.md). `:help switchman` documents it.
local config = require('switchman.config')

local M = {}

-- The modules that listen to the daemon's notifications must be loaded before it starts.
require('switchman.status')
require('switchman.chat')
require('switchman.profiles') -- asks for the profile names as a daemon starts

local function set_keymaps()
  local descriptions = require('switchman.commands').by_name
  for name, lhs in pairs(config.keymaps()) do
    local command = descriptions[name]
    if command then
      vim.keymap.set('n', lhs, '<cmd>Switchman ' .. name .. '<CR>', { silent = true, desc = 'Switchman: ' .. command.desc })
    end
  end
end

--- Configure the plugin (optional: without it the defaults apply). `:help switchman-setup`.
function M.setup(opts)
  config.apply(opts)
  require('switchman.ui').define_highlights()
  set_keymaps()
  if config.options.autostart then
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) then
        M.autostart(bufnr)
      end
    end
  end
end

--- Attach a buffer to Switchman when it is one of its configuration files; returns the client.
function M.attach(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return nil
  end
  return require('switchman.client').attach(bufnr)
end

--- A configuration file was opened: attach it unless `autostart` is off (plugin/switchman.lua).
function M.autostart(bufnr)
  if config.options.autostart then
    return M.attach(bufnr)
  end
end

--- The statusline text for the current buffer's workspace, e.g. `Switchman: sonnet [sticky]`.
function M.statusline()
  return require('switchman.status').statusline()
end

local function root()
  return require('switchman.workspace').root_for_buf(0)
end

--- Open the chat of the current workspace; `message` (optional) is sent at once.
function M.chat(message)
  return require('switchman.chat').open(root(), message)
end

--- Set the sticky model (id or alias); nil clears it.
function M.set_model(model)
  require('switchman.models').set(root(), model)
end

--- Pick the sticky model from the daemon's models.
function M.pick_model()
  require('switchman.models').pick(root())
end

--- Show why the last turn went to its model.
function M.why()
  require('switchman.explain').why(root())
end

--- The workspace's status record (from `switchman/status`), or nil.
function M.status()
  return require('switchman.status').get(root())
end

return M
