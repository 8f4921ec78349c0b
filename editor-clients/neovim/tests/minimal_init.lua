-- `nvim --headless -u tests/minimal_init.lua`: this plugin and Neovim's own runtime, nothing else.
-- The daemon command comes from $SWITCHMAN_TEST_SERVER (tests/editors/test_neovim.py sets it).
local tests = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local plugin = vim.fn.fnamemodify(tests, ':h')

-- HOME and the XDG folders are throw-away (tests/editors/test_neovim.py), so the default
-- runtimepath holds only Neovim's own runtime (and its parsers) besides this plugin.
vim.opt.runtimepath:prepend(plugin)
vim.opt.swapfile = false
vim.opt.shadafile = 'NONE'
package.path = tests .. '/?.lua;' .. package.path

local server = vim.env.SWITCHMAN_TEST_SERVER
require('switchman').setup({
  cmd = server and { server, 'serve' } or nil,
})
