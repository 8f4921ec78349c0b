--- Where things are: the config folder, which buffers are Switchman configuration,
--- and which workspace root a buffer belongs to. Works without `vim.fs` (Neovim 0.7).
local config = require('switchman.config')

local M = {}
local uv = vim.loop
local sep = package.config:sub(1, 1)

--- `path` with `~` expanded, symlinks resolved and no trailing separator.
function M.normalize(path)
  path = vim.fn.fnamemodify(vim.fn.expand(path), ':p')
  path = uv.fs_realpath(path) or path
  if #path > 1 and path:sub(-1) == sep then
    path = path:sub(1, -2)
  end
  return path
end

local function join(...)
  return table.concat({ ... }, sep)
end

local function dirname(path)
  return vim.fn.fnamemodify(path, ':h')
end

local function basename(path)
  return vim.fn.fnamemodify(path, ':t')
end

--- The platform's config folder for Switchman (what the daemon's platformdirs picks).
local function platform_config_dir()
  if vim.fn.has('mac') == 1 then
    return join(vim.env.HOME, 'Library', 'Application Support', 'switchman')
  elseif vim.fn.has('win32') == 1 then
    return join(vim.env.LOCALAPPDATA or join(vim.env.USERPROFILE, 'AppData', 'Local'), 'switchman')
  end
  local xdg = vim.env.XDG_CONFIG_HOME
  if xdg and vim.trim(xdg) ~= '' then
    return join(vim.trim(xdg), 'switchman')
  end
  return join(vim.env.HOME, '.config', 'switchman')
end

--- Switchman's config folder: the `config_dir` option, else $SWITCHMAN_CONFIG_DIR, else the platform's.
function M.config_dir()
  local chosen = config.options.config_dir
  if not chosen or chosen == '' then
    chosen = vim.env.SWITCHMAN_CONFIG_DIR
  end
  if not chosen or chosen == '' then
    chosen = platform_config_dir()
  end
  return M.normalize(chosen)
end

--- `path` as the daemon names a configuration file: absolute, the folders above it with symlinks resolved,
--- but not the file itself nor a workspace's `.switchman` folder. Which file it is, and whose, goes by the
--- name it was opened by: a `.switchman/routing.yaml` linked to `~/notes.yaml` is still the workspace's (the
--- daemon shows it leads out), and one in a `.switchman` linked to `sub/.switchman` is not `sub`'s.
function M.config_path(path)
  path = vim.fn.fnamemodify(vim.fn.expand(path), ':p')
  if #path > 1 and path:sub(-1) == sep then
    path = path:sub(1, -2)
  end
  local above, tail = dirname(path), basename(path)
  if basename(above) == '.switchman' then
    above, tail = dirname(above), join('.switchman', tail)
  end
  above = M.normalize(above)
  local named = (above:sub(-1) == sep and above or above .. sep) .. tail
  if basename(dirname(named)) ~= '.switchman' and (tail == 'routing.yaml' or tail == 'profiles.yaml') then
    return M.through_workspace_link(named)
  end
  return named
end

--- `path` (its folders resolved) named through a workspace's `.switchman` that is a symbolic link to a folder
--- inside that workspace holding `path`, else `path`: Neovim names a buffer opened as
--- `<folder>/.switchman/routing.yaml` by the link's target (`<folder>/config/switchman/routing.yaml`), which is
--- no configuration file by its name. The nearest folder above with such a link wins; a link leading out of its
--- workspace, or to the workspace itself, is not followed back (as the daemon's `through_workspace_link`).
function M.through_workspace_link(path)
  local above = dirname(path)
  while true do
    local parent, prefix = dirname(above), above == sep and sep or above .. sep
    local link = prefix .. '.switchman'
    local found = uv.fs_lstat(link)
    local target = found and found.type == 'link' and uv.fs_realpath(link)
    if target and target:sub(1, #prefix) == prefix and path:sub(1, #target + 1) == target .. sep then
      return link .. path:sub(#target + 1)
    end
    if parent == above then
      return path
    end
    above = parent
  end
end

--- 'routing', 'models' or 'profiles' (the user's files), 'workspace' (a `.switchman/routing.yaml`),
--- 'workspace-profiles' (a `.switchman/profiles.yaml`), or nil.
function M.config_kind(path)
  if not path or path == '' then
    return nil
  end
  path = M.config_path(path)
  local name = basename(path)
  local user = { ['routing.yaml'] = 'routing', ['models.yaml'] = 'models', ['profiles.yaml'] = 'profiles' }
  if user[name] and M.normalize(dirname(path)) == M.config_dir() then -- however its folder is named or linked
    return user[name]
  end
  if basename(dirname(path)) == '.switchman' then
    if name == 'routing.yaml' then
      return 'workspace'
    elseif name == 'profiles.yaml' then
      return 'workspace-profiles'
    end
  end
  return nil
end

--- The nearest folder at or above `dir` holding one of the root markers, or nil.
local function find_marked(dir)
  local markers = config.options.root_markers or {}
  while dir and dir ~= '' do
    for _, marker in ipairs(markers) do
      if uv.fs_stat(join(dir, marker)) then
        return dir
      end
    end
    local parent = dirname(dir)
    if parent == dir then
      return nil
    end
    dir = parent
  end
  return nil
end

--- The workspace root for a file path (the folder above `.switchman` for a workspace file).
function M.root_for_path(path)
  local kind = M.config_kind(path)
  if kind == 'workspace' or kind == 'workspace-profiles' then
    return dirname(dirname(M.config_path(path)))
  end
  path = M.normalize(path)
  local dir = vim.fn.isdirectory(path) == 1 and path or dirname(path)
  return find_marked(dir) or M.normalize(vim.fn.getcwd())
end

--- The workspace root of a buffer: its own (chat and transcript buffers), its file's, else the cwd's.
function M.root_for_buf(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local ok, own = pcall(vim.api.nvim_buf_get_var, bufnr, 'switchman_root')
  if ok and own then
    return own
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or vim.bo[bufnr].buftype ~= '' or name:match('^%a[%w+.-]*://') then
    return M.root_for_path(vim.fn.getcwd())
  end
  return M.root_for_path(name)
end

--- The `file://` URI the daemon knows a workspace by.
function M.uri(root)
  return vim.uri_from_fname(root)
end

return M
