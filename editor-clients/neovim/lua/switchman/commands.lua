--- `:Switchman {subcommand} [args]`, defined from one table with descriptions.
local M = {}

local function root()
  return require('switchman.workspace').root_for_buf(0)
end

local function chat_of(r)
  return require('switchman.chat').get(r)
end

--- Subcommands in the order `:Switchman` (without arguments) lists them.
M.list = {
  {
    name = 'chat',
    desc = 'Open the chat of this workspace (text after it is sent as a message)',
    run = function(args)
      require('switchman.chat').open(root(), table.concat(args, ' '))
    end,
  },
  {
    name = 'model',
    desc = 'Set the sticky model: pick one, name one (id or alias), or "-" to follow the rules again',
    run = function(args)
      local models, r = require('switchman.models'), root()
      if #args == 0 then
        return models.pick(r)
      end
      -- every word, as `/model` takes them: `haiku extra` is refused, not set to haiku
      local named = table.concat(args, ' ')
      models.set(r, named ~= '-' and named or nil)
    end,
    complete = function()
      return require('switchman.models').completions(root())
    end,
  },
  {
    name = 'profile',
    desc = 'Set the agent profile of this session: pick one, name one, or "-" (clear) for the default',
    run = function(args)
      local profiles, r = require('switchman.profiles'), root()
      if #args == 0 then
        return profiles.pick(r)
      end
      local named = table.concat(args, ' ') -- every word: `reviewer extra` is no profile
      profiles.set(r, not profiles.clears(named) and named or nil)
    end,
    complete = function()
      return require('switchman.profiles').completions(root())
    end,
  },
  {
    name = 'why',
    max_args = 0,
    desc = 'Why this model? The routing chain of the last turn',
    run = function()
      require('switchman.explain').why(root())
    end,
  },
  {
    name = 'rules',
    max_args = 1,
    usage = 'rules [check|show|reload]',
    desc = 'Check the configuration and show the rules in evaluation order (or: check, show, reload)',
    run = function(args)
      require('switchman.explain').rules(root(), args[1])
    end,
    complete = function()
      return require('switchman.explain').rules_actions
    end,
  },
  {
    name = 'feedback',
    max_args = 1,
    usage = 'feedback {up|down|none}',
    desc = 'Rate the last answer for the pattern store: up (good), down (bad) or none (take the rating back)',
    run = function(args)
      require('switchman.chat').feedback(root(), args[1])
    end,
    complete = function()
      return { 'up', 'down', 'none' }
    end,
  },
  {
    name = 'sessions',
    max_args = 1,
    usage = 'sessions [workers]',
    desc = "List this workspace's sessions and open one's transcript ('sessions workers': with workers)",
    run = function(args)
      if args[1] and args[1] ~= 'workers' then
        return M.refuse('sessions', ('%q is not an option'):format(args[1]))
      end
      require('switchman.sessions').pick(root(), args[1] == 'workers' or nil)
    end,
    complete = function()
      return { 'workers' }
    end,
  },
  {
    name = 'resume',
    max_args = 1,
    usage = 'resume [session_id]',
    desc = 'Continue an older session of this workspace in the chat (picked, or by id)',
    run = function(args)
      require('switchman.sessions').resume(root(), args[1])
    end,
    complete = function()
      return require('switchman.sessions').completions(root())
    end,
  },
  {
    name = 'workers',
    max_args = 0,
    desc = "List the current session's workers: open one's transcript or stop it",
    run = function()
      require('switchman.chat.workers').pick(root())
    end,
  },
  {
    name = 'new',
    max_args = 0,
    desc = 'Start a new session in this workspace',
    run = function()
      require('switchman.chat').new_session(root())
    end,
  },
  {
    name = 'cancel',
    max_args = 0,
    desc = 'Cancel the running turn',
    run = function()
      local chat = chat_of(root())
      if not chat then
        return vim.notify('Switchman: no chat is open in this workspace.', vim.log.levels.INFO)
      end
      chat:cancel()
    end,
  },
  {
    name = 'status',
    max_args = 0,
    desc = "Show the workspace's model, session, cost today and notices",
    run = function()
      vim.notify(table.concat(require('switchman.status').describe(root()), '\n'), vim.log.levels.INFO)
    end,
  },
  {
    name = 'send',
    desc = "Attach the selected lines (:'<,'>Switchman send) or the buffer to the next message; text after it is sent at once",
    run = function(args, opts)
      require('switchman.attach').selection(opts, table.concat(args, ' '))
    end,
  },
  {
    name = 'delegate',
    desc = "Hand a task to a worker: the selected lines (:'<,'>Switchman delegate [tier] [what to do]), "
      .. 'the task written after it, or your last request',
    run = function(args, opts)
      require('switchman.attach').delegate(opts, args)
    end,
    complete = function()
      return require('switchman.attach').delegate_targets()
    end,
  },
  {
    name = 'add',
    desc = 'Attach a file (default: the current one) to the next chat message',
    run = function(args)
      -- one file: a name with spaces is one name, though completion puts it unescaped
      require('switchman.attach').file(table.concat(args, ' '))
    end,
    complete = function(arglead)
      return vim.fn.getcompletion(arglead, 'file')
    end,
  },
  {
    name = 'trust',
    max_args = 0,
    desc = 'List the tools that run without asking in this workspace and revoke one (or all)',
    run = function()
      require('switchman.trust').pick(root())
    end,
  },
  {
    name = 'restart',
    max_args = 0,
    desc = 'Restart the Switchman daemon(s)',
    run = function()
      require('switchman.client').restart()
    end,
  },
}

M.by_name = {}
for _, command in ipairs(M.list) do
  M.by_name[command.name] = command
end

local function usage()
  local lines = { 'Usage: :Switchman {subcommand}' }
  for _, command in ipairs(M.list) do
    table.insert(lines, ('  %-9s %s'):format(command.name, command.desc))
  end
  return table.concat(lines, '\n')
end

--- Refuse `:Switchman {name} …` for `why` (its usage line says what it takes).
function M.refuse(name, why)
  local command = M.by_name[name]
  local takes = command.usage and ('Usage: :Switchman ' .. command.usage) or 'It takes no arguments'
  vim.notify(('Switchman: :Switchman %s: %s; nothing was done. %s.'):format(name, why, takes), vim.log.levels.ERROR)
end

--- Run `:Switchman` with the user command's `opts` (`fargs`).
function M.run(opts)
  require('switchman')
  local args = vim.deepcopy(opts.fargs or {})
  local name = table.remove(args, 1)
  if not name then
    return vim.notify(usage(), vim.log.levels.INFO)
  end
  local command = M.by_name[name]
  if not command then
    local guess = require('switchman.slips').meant(name, vim.tbl_map(function(c)
      return c.name
    end, M.list))
    local hint = guess and (' Did you mean :Switchman %s?'):format(guess) or ''
    return vim.notify(('Switchman: unknown subcommand %q.%s\n%s'):format(name, hint, usage()), vim.log.levels.ERROR)
  end
  if command.max_args and #args > command.max_args then
    -- an argument the subcommand has no use for is refused, not dropped: `sessions worker`,
    -- `trust revoke edit_file` or `workers stop` would do something else than asked
    local extra = table.concat(vim.list_slice(args, command.max_args + 1), ' ')
    return M.refuse(name, ('%q is not an argument it takes'):format(extra))
  end
  command.run(args, opts)
end

--- Complete `:Switchman` arguments.
function M.complete(arglead, cmdline)
  require('switchman')
  local words = vim.split(cmdline:gsub('^%s*%S+%s*', ''), '%s+')
  local candidates
  if #words <= 1 then
    candidates = vim.tbl_map(function(c)
      return c.name
    end, M.list)
  else
    local command = M.by_name[words[1]]
    candidates = command and command.complete and command.complete(arglead) or {}
  end
  return vim.tbl_filter(function(c)
    return vim.startswith(c, arglead)
  end, candidates)
end

return M
