-- switchman.nvim: load guard, the :Switchman entry point and autocommands. Everything
-- else is loaded on first use from lua/switchman/.
if vim.g.loaded_switchman == 1 then
  return
end
if vim.fn.has('nvim-0.7') ~= 1 then
  vim.api.nvim_echo({ { 'switchman.nvim needs Neovim 0.7 or newer', 'ErrorMsg' } }, true, {})
  return
end
vim.g.loaded_switchman = 1

vim.api.nvim_create_user_command('Switchman', function(opts)
  require('switchman.commands').run(opts)
end, {
  nargs = '*',
  range = true,
  desc = 'Switchman: chat, model, why, rules, sessions, workers, new, cancel, status, send, delegate, add, restart',
  complete = function(arglead, cmdline)
    return require('switchman.commands').complete(arglead, cmdline)
  end,
})

local group = vim.api.nvim_create_augroup('switchman', { clear = true })

vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
  group = group,
  pattern = { 'routing.yaml', 'models.yaml', 'profiles.yaml' },
  desc = 'Switchman: check routing.yaml / models.yaml as you edit',
  callback = function(args)
    require('switchman').autostart(args.buf)
  end,
})

-- An autocommand callback that passes its buffer to `switchman.client`'s `name` when that module is
-- loaded: without it no daemon runs, and nothing is loaded or started for this.
local function to_running_daemons(name)
  return function(args)
    local client = package.loaded['switchman.client']
    if client then
      client[name](args.buf)
    end
  end
end

-- A running daemon is sent the file buffers of its workspace (its tools read what you see). Nothing is
-- loaded or started for this: without a loaded client module no daemon runs.
vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
  group = group,
  desc = "Switchman: share the workspace's file buffers with its running daemon",
  callback = to_running_daemons('share'),
})

-- A shared buffer renamed (`:saveas`) is the new file's buffer for the daemon too (Neovim 0.7 does not
-- tell the servers).
vim.api.nvim_create_autocmd('BufFilePre', {
  group = group,
  desc = 'Switchman: remember the name of a buffer being renamed',
  callback = function(args)
    vim.b[args.buf].switchman_old_name = vim.api.nvim_buf_get_name(args.buf)
  end,
})
vim.api.nvim_create_autocmd('BufFilePost', {
  group = group,
  desc = 'Switchman: tell the running daemons of a renamed buffer',
  callback = function(args)
    local client = package.loaded['switchman.client']
    if client then
      client.renamed(args.buf, vim.b[args.buf].switchman_old_name)
    end
  end,
})

-- Plugin managers that load on `ft = 'yaml'` replay FileType, not BufReadPost.
vim.api.nvim_create_autocmd('FileType', {
  group = group,
  pattern = 'yaml',
  desc = 'Switchman: check routing.yaml / models.yaml as you edit',
  callback = function(args)
    local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(args.buf), ':t')
    if name == 'routing.yaml' or name == 'models.yaml' or name == 'profiles.yaml' then
      require('switchman').autostart(args.buf)
    end
  end,
})

vim.api.nvim_create_autocmd('ColorScheme', {
  group = group,
  desc = 'Switchman: highlight groups',
  callback = function()
    if package.loaded['switchman.ui'] then
      package.loaded['switchman.ui'].define_highlights()
    end
  end,
})
