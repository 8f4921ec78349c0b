--- Watches the skills folders for the running daemons: a skill file added, changed, removed or renamed —
--- in Neovim or outside it (`rm`, `git checkout`) — has the open routing/profiles files checked again
--- (their `unknown-skill` warnings), as VS Code's file watcher does.
---
--- The daemon asks the editor to watch its files (dynamic `workspace/didChangeWatchedFiles`), which
--- Neovim does not do on Linux (0.7, and 0.10+ only on macOS and Windows). So while a daemon runs, the
--- plugin watches with libuv (`fs_event`, inotify on Linux): the user's `<config>/skills/` and each
--- running daemon's workspace's `.switchman/skills/`, with their subfolders (up to `MAX_FOLDERS` each,
--- since inotify does not watch below a folder), and the folder above each (its creation, removal or
--- renaming). Events are gathered for `DELAY_MS` (a checkout changes many files at once), then each
--- running daemon that Neovim does not watch files for is sent one `workspace/didChangeWatchedFiles`.
--- The watches end with the last daemon.
---
--- The skills of the folders a `workspaces:` block of the user's routing.yaml is keyed on (and of the
--- folders below them) are not watched here: the daemon polls them itself while routing.yaml is open,
--- for every editor (docs/architecture.md), so a watch here had each change checked twice.
local workspace = require('switchman.workspace')

local uv = vim.uv or vim.loop
local SEP = package.config:sub(1, 1)

local M = {}

M.MAX_FOLDERS = 64
M.DELAY_MS = 50

local roots = {} -- workspace root -> true, while its daemon runs
local watching = {} -- folder -> { handle, ino }
local filters = {} -- folder -> true (every entry) or { [name] = skills folder } (the entries leading to one)
local pending = {} -- path -> LSP FileChangeType
local flushing = false

local function stat_dir(path)
  local found = uv.fs_stat(path)
  return found and found.type == 'directory' and found or nil
end

local function dirname(path)
  return path:match('^(.*)' .. vim.pesc(SEP) .. '[^' .. vim.pesc(SEP) .. ']*$') or path
end

local function basename(path)
  return path:match('[^' .. vim.pesc(SEP) .. ']*$')
end

--- The skills folders of the user and of the running daemons' workspaces.
local function skills_folders()
  if next(roots) == nil then
    return {}
  end
  local found = { workspace.config_dir() .. SEP .. 'skills' }
  for root in pairs(roots) do
    table.insert(found, root .. SEP .. '.switchman' .. SEP .. 'skills')
  end
  return found
end

--- `folder` and the folders below it (breadth first, `MAX_FOLDERS` in all; links are not followed).
local function tree(folder, want)
  local queue, count = { folder }, 0
  while #queue > 0 and count < M.MAX_FOLDERS do
    local current = table.remove(queue, 1)
    want[current], count = true, count + 1
    local scan = uv.fs_scandir(current)
    while scan do
      local name, kind = uv.fs_scandir_next(scan)
      if not name then
        break
      end
      if kind == 'directory' then
        table.insert(queue, current .. SEP .. name)
      end
    end
  end
end

--- What to watch now: folder -> true or the names of the entries to notice.
local function wanted()
  local want = {}
  for _, folder in ipairs(skills_folders()) do
    if stat_dir(folder) then
      tree(folder, want)
    end
    -- the folder created, removed or renamed: the nearest existing folder above it (two levels up at most)
    local child, parent = folder, dirname(folder)
    if not stat_dir(parent) then
      child, parent = parent, dirname(parent)
    end
    if stat_dir(parent) and want[parent] ~= true then
      want[parent] = want[parent] or {}
      want[parent][basename(child)] = folder
    end
  end
  return want
end

--- Whether the entry `name` of a skills folder may be (or have been) a skill or a folder of skills.
local function skill_like(path, name)
  return name:match('%.md$') ~= nil or not name:find('.', 1, true) or stat_dir(path) ~= nil
end

local flush

local function schedule_flush()
  if not flushing then
    flushing = true
    vim.defer_fn(flush, M.DELAY_MS)
  end
end

--- libuv's callback (a fast context: no Neovim API here).
local function on_event(folder)
  return function(err, name, events)
    local filter = filters[folder]
    if filter == nil then
      return
    end
    local path = folder -- an error: the folder itself is reported (the daemon checks again anyway)
    if not err and name then
      if filter ~= true and not filter[name] then
        return
      end
      -- above a skills folder, the skills folder is reported: the daemon takes a change of `.switchman`
      -- alone (made with its skills by `mkdir -p`, a checkout) for no skill's
      path = filter == true and (folder .. SEP .. name) or filter[name]
      if filter == true and not skill_like(path, name) then
        return
      end
    end
    local exists = uv.fs_stat(path) ~= nil
    pending[path] = not exists and 3 or (events and events.rename) and 1 or 2 -- Deleted, Created, Changed
    schedule_flush()
  end
end

local function unwatch(folder)
  local watch = watching[folder]
  if watch then
    watch.handle:stop()
    watch.handle:close()
    watching[folder] = nil
  end
end

--- Watch what `wanted()` says, now: new folders are watched, gone ones let go, a folder replaced by
--- another of the same name (another inode) watched again.
local function refresh()
  local want = wanted()
  for folder in pairs(watching) do
    local found = want[folder] and stat_dir(folder)
    if not found or found.ino ~= watching[folder].ino then
      unwatch(folder)
    end
  end
  filters = want
  for folder in pairs(want) do
    local found = stat_dir(folder)
    if found and not watching[folder] then
      local handle = uv.new_fs_event()
      if handle and handle:start(folder, {}, on_event(folder)) == 0 then
        watching[folder] = { handle = handle, ino = found.ino }
      elseif handle then
        handle:close()
      end
    end
  end
end

--- The gathered changes go to each running daemon that Neovim does not watch files for; the folders
--- are watched as they are now first, so a file made in a folder just created is either seen by the
--- daemon's check that follows or reported by the new watch.
flush = function()
  flushing = false
  refresh()
  local changes = {}
  for path, kind in pairs(pending) do
    table.insert(changes, { uri = vim.uri_from_fname(path), type = kind })
  end
  pending = {}
  if #changes == 0 then
    return
  end
  local client = require('switchman.client')
  for _, running in pairs(client.all()) do
    if not client.watches_files(running) then
      client.call(running, 'notify', 'workspace/didChangeWatchedFiles', { changes = changes })
    end
  end
end

--- The daemon of `root` runs: watch its workspace's skills folder (and the user's).
function M.watch(root)
  roots[root] = true
  refresh()
end

--- The daemon of `root` stopped: its workspace's skills folder is no longer watched (nor the user's,
--- after the last daemon).
function M.release(root)
  roots[root] = nil
  refresh()
end

--- The folders watched now, sorted (`:checkhealth`, tests).
function M.watched()
  local found = vim.tbl_keys(watching)
  table.sort(found)
  return found
end

return M
