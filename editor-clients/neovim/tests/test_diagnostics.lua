-- routing.yaml / models.yaml buffers attach to the daemon, which publishes diagnostics.
local H = require('harness')
local client = require('switchman.client')

local config_dir = vim.env.SWITCHMAN_CONFIG_DIR
local project = vim.env.SWITCHMAN_TEST_WORKSPACE

local BROKEN = {
  'rules:',
  '  - name: fast',
  '    when: {message_matches: "commit"}',
  '    use: nosuchmodel',
}

local function write(path, lines)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  vim.fn.writefile(lines, path)
end

local function diagnostics(bufnr)
  return vim.diagnostic.get(bufnr)
end

local function wait_unknown_model(bufnr)
  local found = H.wait_for('the unknown-model diagnostic', function()
    local all = diagnostics(bufnr)
    return #all == 1 and all[1].message:find('nosuchmodel', 1, true) and all[1]
  end, nil, function()
    return diagnostics(bufnr)
  end)
  H.eq(1, #diagnostics(bufnr), 'one diagnostic')
  H.eq({ 3, 9, 3, 20 }, { found.lnum, found.col, found.end_lnum, found.end_col }, 'at `nosuchmodel` (0-based)')
  H.eq(vim.diagnostic.severity.ERROR, found.severity, 'an error')
  H.eq('switchman', found.source, 'from switchman')
  H.check(found.message:find("Unknown model 'nosuchmodel'", 1, true), 'says what is wrong', found.message)
  return found
end

local function code_of(d)
  return d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
end

local skill_watch = require('switchman.skill_watch')
local mine, theirs = config_dir .. '/skills', project .. '/.switchman/skills'

local function shell(command)
  vim.fn.system({ 'sh', '-c', command })
  H.eq(0, vim.v.shell_error, command)
end

--- Open the user's profiles.yaml with `command` (`edit`, `edit!`); returns its buffer once it is attached
--- to the workspace's daemon (as when a workspace is open: the user's files go to a running daemon).
local function open_profiles(command)
  vim.cmd(command .. ' ' .. vim.fn.fnameescape(config_dir .. '/profiles.yaml'))
  local profiles = vim.api.nvim_get_current_buf()
  H.wait_for("profiles.yaml to attach to the workspace's daemon", function()
    local attached = H.buf_clients(profiles)[1]
    return attached and client.root_of(attached.id) == vim.fn.resolve(project)
  end)
  return profiles
end

--- Open the user's profiles.yaml (on the workspace's running daemon) as a profile listing
--- `skills` (`a, b`); returns `wait_unknown(names, what)`, which waits until the skills it warns
--- of are `names` (sorted, separated by spaces).
local function edit_profile_naming(skills)
  local profiles = open_profiles('edit!')
  vim.api.nvim_buf_set_lines(profiles, 0, -1, false, { 'profiles:', '  reviewer:', '    skills: [' .. skills .. ']' })
  local function unknown_skills()
    local names = {}
    for _, d in ipairs(diagnostics(profiles)) do
      if code_of(d) == 'unknown-skill' then
        table.insert(names, d.message:match("No skill named '([^']*)'"))
      end
    end
    table.sort(names)
    return table.concat(names, ' ')
  end
  return function(names, what)
    H.wait_for(what, function()
      return unknown_skills() == names
    end, nil, function()
      return { unknown = unknown_skills(), watched = skill_watch.watched() }
    end)
  end
end

--- The user's routing.yaml with a `workspaces:` block keyed on `folder`, whose rule names the skill `ledger`.
local function write_block_routing(folder)
  write(config_dir .. '/routing.yaml', { 'workspaces:', '  "' .. folder .. '":', '    rules:', '      - name: ledger work',
    '        when: {skills_matching_message_includes: [ledger]}', '        use: haiku' })
end

--- Open the user's routing.yaml; returns `wait_warned(expected, what)`, which waits until whether it has an
--- unknown-skill warning is `expected`.
local function routing_warnings()
  vim.cmd('edit! ' .. vim.fn.fnameescape(config_dir .. '/routing.yaml'))
  local bufnr = vim.api.nvim_get_current_buf()
  local function warned()
    for _, d in ipairs(diagnostics(bufnr)) do
      if code_of(d) == 'unknown-skill' then
        return true
      end
    end
    return false
  end
  return function(expected, what)
    H.wait_for(what, function()
      return warned() == expected
    end, nil, function()
      return { diagnostics = diagnostics(bufnr), watched = skill_watch.watched() }
    end)
  end
end

local function workspace_clients()
  local names = {}
  for root in pairs(client.all()) do
    table.insert(names, root)
  end
  table.sort(names)
  return names
end

return {
  {
    'a broken routing.yaml shows the diagnostic at the right line',
    function()
      local path = config_dir .. '/routing.yaml'
      write(path, BROKEN)
      vim.cmd('edit ' .. vim.fn.fnameescape(path))
      wait_unknown_model(vim.api.nvim_get_current_buf())
    end,
  },
  {
    'the diagnostic clears when the line is fixed (unsaved edit)',
    function()
      local bufnr = vim.api.nvim_get_current_buf()
      vim.api.nvim_buf_set_lines(bufnr, 3, 4, false, { '    use: haiku' })
      H.wait_for('the diagnostics to clear', function()
        return #diagnostics(bufnr) == 0
      end, nil, function()
        return diagnostics(bufnr)
      end)
    end,
  },
  {
    'breaking it again by typing brings the diagnostic back',
    function()
      local bufnr = vim.api.nvim_get_current_buf()
      vim.api.nvim_win_set_cursor(0, { 4, 9 })
      H.feed('Cnosuchmodel<Esc>')
      wait_unknown_model(bufnr)
      vim.cmd('silent write')
    end,
  },
  {
    "a workspace's .switchman/routing.yaml gets its own client, rooted at the workspace",
    function()
      local path = project .. '/.switchman/routing.yaml'
      write(path, BROKEN)
      vim.cmd('edit ' .. vim.fn.fnameescape(path))
      local bufnr = vim.api.nvim_get_current_buf()
      wait_unknown_model(bufnr)
      local expected = { vim.fn.resolve(config_dir), vim.fn.resolve(project) }
      table.sort(expected)
      H.eq(expected, workspace_clients(), 'one client per root')
      H.eq(vim.fn.resolve(project), vim.b.switchman_root, 'the buffer belongs to the workspace')
    end,
  },
  {
    "the user's models.yaml attaches to a running client instead of starting another",
    function()
      vim.cmd('edit ' .. vim.fn.fnameescape(config_dir .. '/models.yaml'))
      local bufnr = vim.api.nvim_get_current_buf()
      H.wait_for('models.yaml to attach', function()
        return #H.buf_clients(bufnr) == 1
      end)
      H.eq(2, #workspace_clients(), 'still two clients')
      vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, { 'providers: 42' })
      H.wait_for('a models.yaml diagnostic on line 1', function()
        local d = diagnostics(bufnr)[1]
        return d and d.lnum == 0
      end, nil, function()
        return diagnostics(bufnr)
      end)
    end,
  },
  {
    ':Switchman restart starts the daemons again and re-attaches the buffers',
    function()
      local before = vim.tbl_map(function(c)
        return c.id
      end, vim.tbl_values(client.all()))
      vim.cmd('Switchman restart')
      local path = project .. '/.switchman/routing.yaml'
      vim.cmd('edit ' .. vim.fn.fnameescape(path))
      local bufnr = vim.api.nvim_get_current_buf()
      H.wait_for('a new client to attach', function()
        local attached = H.buf_clients(bufnr)[1]
        return attached and not vim.tbl_contains(before, attached.id)
      end)
      wait_unknown_model(bufnr)
      H.eq(2, #workspace_clients(), 'still one client per root')
    end,
  },
  {
    'a misspelt skill name is a warning and an empty when: a note that it matches every turn',
    function()
      write(project .. '/.switchman/skills/design.md', { '---', 'name: system_design', 'description: Architecture', '---' })
      vim.cmd('edit ' .. vim.fn.fnameescape(project .. '/.switchman/routing.yaml'))
      local bufnr = vim.api.nvim_get_current_buf()
      vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, {
        'rules:',
        '  - name: design',
        '    when: {skills_matching_message_includes: [sytem_design]}',
        '    use: opus',
        '  - name: all',
        '    when:',
        '    use: haiku',
      })
      local found = H.wait_for('the unknown-skill and empty-when diagnostics', function()
        local by_code = {}
        for _, d in ipairs(diagnostics(bufnr)) do
          by_code[code_of(d)] = d
        end
        return #diagnostics(bufnr) == 2 and by_code['unknown-skill'] and by_code['empty-when'] and by_code
      end, nil, function()
        return diagnostics(bufnr)
      end)
      local skill, empty = found['unknown-skill'], found['empty-when']
      H.eq({ 2, 46, 2, 58 }, { skill.lnum, skill.col, skill.end_lnum, skill.end_col }, 'on the skill name')
      H.eq(vim.diagnostic.severity.WARN, skill.severity, 'a warning')
      H.check(skill.message:find("Did you mean 'system_design'?", 1, true), 'names the skill meant', skill.message)
      H.eq({ 5, 4, 5, 8 }, { empty.lnum, empty.col, empty.end_lnum, empty.end_col }, 'on `when`')
      H.eq(vim.diagnostic.severity.INFO, empty.severity, 'a note')
      H.check(empty.message:find('matches every turn', 1, true), 'says what it does', empty.message)
    end,
  },
  {
    "a skill file written in the user's own skills folder checks the open profiles.yaml again",
    function()
      -- as when a workspace is open: the user's profiles.yaml goes to the workspace's daemon, and the
      -- skills folder (outside the workspace) has its buffers attached to no daemon (no didSave)
      client.stop(vim.fn.resolve(config_dir))
      vim.fn.mkdir(config_dir .. '/skills', 'p')
      local profiles = open_profiles('edit')
      vim.api.nvim_buf_set_lines(profiles, 0, -1, false, { 'profiles:', '  reviewer:', '    skills: [code_review]' })
      local function unknown_skills()
        return vim.tbl_filter(function(d)
          return code_of(d) == 'unknown-skill'
        end, diagnostics(profiles))
      end
      H.wait_for('the unknown-skill warning', function()
        return #unknown_skills() == 1
      end, nil, function()
        return diagnostics(profiles)
      end)
      vim.cmd('split ' .. vim.fn.fnameescape(config_dir .. '/skills/review.md'))
      vim.api.nvim_buf_set_lines(0, 0, -1, false, { '---', 'name: code_review', 'description: Reviews', '---' })
      vim.cmd('write')
      H.eq(0, #H.buf_clients(0), 'the skill file is shared with no daemon')
      H.wait_for('the warning cleared once the skill is saved', function()
        return #unknown_skills() == 0
      end, nil, function()
        return diagnostics(profiles)
      end)
      vim.cmd('close')
    end,
  },
  {
    'other yaml files are not checked: one of the workspace is only shared with its daemon, one elsewhere not at all',
    function()
      local path = project .. '/config.yaml'
      write(path, { 'use: [unclosed' })
      vim.cmd('edit ' .. vim.fn.fnameescape(path))
      local attached = H.buf_clients(0)
      H.eq(1, #attached, "shared with the workspace's daemon (its tools read the buffer)")
      H.eq(vim.fn.resolve(project), client.root_of(attached[1].id), 'and only with it')
      -- a request answered after the didOpen: a check would have been scheduled by now
      client.request_sync(vim.fn.resolve(project), 'switchman/trust', { workspace = vim.uri_from_fname(project) })
      vim.wait(300, function()
        return #diagnostics(0) > 0
      end, 20)
      H.eq({}, diagnostics(0), 'no diagnostics for a file that is no configuration')
      local elsewhere = vim.env.HOME .. '/notes/config.yaml'
      write(elsewhere, { 'a: 1' })
      vim.cmd('edit ' .. vim.fn.fnameescape(elsewhere))
      H.eq(0, #H.buf_clients(0), 'a file outside every root has no client')
    end,
  },
  {
    'a skill file removed, renamed or added outside Neovim checks the open profiles.yaml again; the watch ends with the daemons',
    function()
      -- Neovim does not watch files for the daemon on Linux: the plugin's own watch (switchman.skill_watch)
      write(mine .. '/review.md', { '---', 'name: code_review', 'description: Reviews', '---' })
      vim.fn.delete(theirs, 'rf')
      local wait_unknown = edit_profile_naming('code_review, db')
      wait_unknown('db', 'db is unknown')
      -- a folder and its skill made outside Neovim (the folder did not exist: its parent is watched)
      shell('mkdir -p ' .. vim.fn.shellescape(theirs) .. " && printf '%s\\n' --- 'name: db' --- > "
        .. vim.fn.shellescape(theirs .. '/db.md'))
      wait_unknown('', 'the warning cleared once the skill was added')
      shell('rm ' .. vim.fn.shellescape(mine .. '/review.md'))
      wait_unknown('code_review', 'code_review is unknown once its file was removed')
      shell(('mv %s %s'):format(vim.fn.shellescape(theirs .. '/db.md'), vim.fn.shellescape(theirs .. '/db.txt')))
      wait_unknown('code_review db', 'db is unknown once its file was renamed')
      H.check(vim.tbl_contains(skill_watch.watched(), vim.fn.resolve(theirs)), 'the workspace folder is watched',
        skill_watch.watched())
      client.stop()
      H.wait_for('the watch to end with the daemons', function()
        return #skill_watch.watched() == 0
      end, nil, skill_watch.watched)
    end,
  },
  {
    "a workspace's skills folder made outside Neovim where .switchman did not exist either checks profiles.yaml again",
    function()
      -- `mkdir -p .switchman/skills` and a skill at once (a checkout, say): only the workspace folder was
      -- watched, and the new .switchman alone is no skill file to the daemon
      vim.fn.delete(project .. '/.switchman', 'rf')
      client.ensure(vim.fn.resolve(project)) -- as a chat there does
      local wait_unknown = edit_profile_naming('db')
      wait_unknown('db', 'db is unknown')
      shell('mkdir -p ' .. vim.fn.shellescape(theirs) .. " && printf '%s\\n' --- 'name: db' --- > "
        .. vim.fn.shellescape(theirs .. '/db.md'))
      wait_unknown('', 'the warning cleared once the folders and the skill were made')
      client.stop()
    end,
  },
  {
    "a skill added outside Neovim to a folder your routing.yaml's workspaces: block names clears its warning",
    function()
      -- a rule of the block keyed on another repository (no daemon runs for it) may name that
      -- repository's skills: the daemon polls them while routing.yaml is open, so the plugin does not
      -- watch them too (it did: each change was checked twice)
      local billing = vim.fn.fnamemodify(project, ':h') .. '/billing'
      vim.fn.mkdir(billing, 'p')
      local function watched_under(folder)
        return vim.tbl_filter(function(watched)
          return watched == folder or vim.startswith(watched, folder .. '/')
        end, skill_watch.watched())
      end
      local function none_under_billing(what)
        H.eq({}, watched_under(vim.fn.resolve(billing)), what)
      end
      client.ensure(vim.fn.resolve(project))
      -- written after the daemon started, as an edit of the block would be
      write_block_routing(billing)
      local wait_warned = routing_warnings()
      wait_warned(true, 'the unknown-skill warning')
      none_under_billing('the block folder is not watched by the plugin')
      shell('mkdir -p ' .. vim.fn.shellescape(billing .. '/.switchman/skills') .. " && printf '%s\\n' --- 'name: ledger' "
        .. "'description: Ledgers' --- > " .. vim.fn.shellescape(billing .. '/.switchman/skills/ledger.md'))
      wait_warned(false, 'the warning cleared')
      none_under_billing('nor its skills folder once made')
      H.check(#watched_under(vim.fn.resolve(project)) > 0, "the running workspace's skills are still watched",
        skill_watch.watched())
      vim.cmd('bwipeout!')
      vim.fn.delete(config_dir .. '/routing.yaml')
      client.stop()
    end,
  },
  {
    "a skill added outside Neovim to a folder below the one a workspaces: block names clears its warning",
    function()
      -- a block keyed on a folder of repositories may name the skills of those below it (three levels down):
      -- neither Neovim nor the plugin watches them, the daemon polls them while routing.yaml is open
      local code = vim.fn.fnamemodify(project, ':h') .. '/code'
      local skills = code .. '/ledgers/.switchman/skills'
      vim.fn.mkdir(skills, 'p')
      write_block_routing(code)
      client.ensure(vim.fn.resolve(project))
      local wait_warned = routing_warnings()
      wait_warned(true, 'the unknown-skill warning')
      shell("printf '%s\\n' --- 'name: ledger' 'description: Ledgers' --- > " .. vim.fn.shellescape(skills .. '/ledger.md'))
      wait_warned(false, 'the warning cleared')
      vim.cmd('bwipeout!')
      vim.fn.delete(config_dir .. '/routing.yaml')
      client.stop()
    end,
  },
  {
    "a workspace's .switchman/routing.yaml linked out of it shows the outside-workspace error alone, in its workspace",
    function()
      -- the plugin resolved the buffer's name to the link's target (notes.yaml, outside the workspace): no
      -- configuration file, so it was never sent to the daemon and showed nothing
      local repo, notes = vim.env.HOME .. '/repo', vim.env.HOME .. '/notes.yaml'
      write(notes, BROKEN)
      vim.fn.mkdir(repo .. '/.switchman', 'p')
      shell(('ln -s %s %s'):format(vim.fn.shellescape(notes), vim.fn.shellescape(repo .. '/.switchman/routing.yaml')))
      vim.cmd('edit ' .. vim.fn.fnameescape(repo .. '/.switchman/routing.yaml'))
      local bufnr = vim.api.nvim_get_current_buf()
      local found = H.wait_for('the outside-workspace error', function()
        local all = diagnostics(bufnr)
        return #all == 1 and code_of(all[1]) == 'outside-workspace' and all[1]
      end, nil, function()
        return diagnostics(bufnr)
      end)
      H.eq({ 0, 0 }, { found.lnum, found.col }, 'at the first line')
      H.check(found.message:find('leading out of the workspace, to ' .. vim.fn.resolve(notes), 1, true),
        'says where it leads', found.message)
      H.eq(vim.fn.resolve(repo), vim.b.switchman_root, 'the buffer belongs to the workspace it was opened in')
    end,
  },
  {
    "a workspace's .switchman/routing.yaml linked to a file inside the workspace is checked as the workspace's",
    function()
      -- named by the link's target (`config/switchman.yaml`), it was no configuration file: only shared
      -- with the daemon as a workspace file, and never checked
      local repo = vim.env.HOME .. '/inside'
      write(repo .. '/config/switchman.yaml', BROKEN)
      vim.fn.mkdir(repo .. '/.switchman', 'p')
      shell(('ln -s %s %s'):format(vim.fn.shellescape(repo .. '/config/switchman.yaml'),
        vim.fn.shellescape(repo .. '/.switchman/routing.yaml')))
      vim.cmd('edit ' .. vim.fn.fnameescape(repo .. '/.switchman/routing.yaml'))
      wait_unknown_model(vim.api.nvim_get_current_buf())
      H.eq(vim.fn.resolve(repo), vim.b.switchman_root, 'the buffer belongs to the workspace')
    end,
  },
  {
    "a workspace's .switchman linked to a folder inside the workspace: its routing.yaml is checked as the workspace's",
    function()
      -- Neovim names the buffer by the folder's target (`config/switchman/routing.yaml`): no configuration file
      -- to the plugin nor to the daemon, so it was never checked
      local repo = vim.env.HOME .. '/linked-folder'
      write(repo .. '/config/switchman/routing.yaml', BROKEN)
      shell(('ln -s %s %s'):format(vim.fn.shellescape(repo .. '/config/switchman'),
        vim.fn.shellescape(repo .. '/.switchman')))
      vim.cmd('edit ' .. vim.fn.fnameescape(repo .. '/.switchman/routing.yaml'))
      wait_unknown_model(vim.api.nvim_get_current_buf())
      H.eq(vim.fn.resolve(repo), vim.b.switchman_root, 'the buffer belongs to the workspace')
      local attached = H.buf_clients(0)
      H.eq(1, #attached, 'one daemon')
      H.eq(vim.fn.resolve(repo), client.root_of(attached[1].id), "the workspace's")
    end,
  },
  {
    "a skill written in a workspace's .switchman linked within it, in Neovim or outside, checks profiles.yaml again",
    function()
      -- `.switchman` a link to `config/switchman` (inside the workspace): Neovim names the skill's buffer by the
      -- link's target, `config/switchman/skills/db.md`, which was in no skills folder to the daemon when saved
      client.stop()
      vim.fn.delete(project .. '/.switchman', 'rf')
      vim.fn.mkdir(project .. '/config/switchman/skills', 'p')
      shell(('ln -s %s %s'):format(vim.fn.shellescape(project .. '/config/switchman'),
        vim.fn.shellescape(project .. '/.switchman')))
      client.ensure(vim.fn.resolve(project))
      local wait_unknown = edit_profile_naming('db, review')
      wait_unknown('db review', 'both are unknown')
      vim.cmd('split ' .. vim.fn.fnameescape(theirs .. '/db.md'))
      H.eq(vim.fn.resolve(project) .. '/config/switchman/skills/db.md', vim.api.nvim_buf_get_name(0),
        "named by the link's target")
      vim.api.nvim_buf_set_lines(0, 0, -1, false, { '---', 'name: db', 'description: Schemas', '---' })
      vim.cmd('write')
      wait_unknown('review', 'db is known once saved in Neovim')
      vim.cmd('close')
      shell("printf '%s\\n' --- 'name: review' --- > " .. vim.fn.shellescape(theirs .. '/review.md'))
      wait_unknown('', 'review is known once written outside Neovim')
      H.check(vim.tbl_contains(skill_watch.watched(), vim.fn.resolve(project) .. '/.switchman/skills'),
        'the skills folder is watched by the name under the workspace', skill_watch.watched())
      client.stop()
    end,
  },
  {
    'a configuration file that is not UTF-8 is named with how to write it as UTF-8 (its buffer looked fine)',
    function()
      -- Neovim reads it as latin1, so the buffer the daemon is sent is valid and shows no problem, while
      -- the daemon cannot read the file and keeps the last valid version; :write kept it latin1
      local path = config_dir .. '/models.yaml'
      local saved = vim.fn.readfile(path, 'b')
      local file = assert(io.open(path, 'wb'))
      file:write('# caf\233\n', table.concat(saved, '\n'), '\n')
      file:close()
      if vim.fn.bufnr(path) ~= -1 then -- read afresh: an open buffer keeps its encoding
        vim.cmd('bwipeout! ' .. vim.fn.bufnr(path))
      end
      H.notifications = {}
      vim.cmd('edit ' .. vim.fn.fnameescape(path))
      local bufnr = vim.api.nvim_get_current_buf()
      H.eq('latin1', vim.bo[bufnr].fileencoding, 'Neovim read it as latin1')
      H.wait_notification(vim.log.levels.WARN, 'models.yaml is not UTF-8', ':set fileencoding=utf-8')
      vim.cmd('bwipeout! ' .. bufnr)
      vim.fn.writefile(saved, path, 'b')
    end,
  },
}
