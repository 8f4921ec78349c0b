--- The workspace's sessions (`switchman/sessions`, workers nested under their planner) and
--- read-only transcripts (`switchman/session`) with per-turn model and cost.
local client = require('switchman.client')
local cost = require('switchman.cost')
local models = require('switchman.models')
local protocol = require('switchman.protocol')
local render = require('switchman.render')
local ui = require('switchman.ui')
local workspace = require('switchman.workspace')

local M = {}

--- Sessions and their workers as one list of { session, depth }, newest first.
function M.flatten(sessions, depth, out)
  out, depth = out or {}, depth or 0
  for _, session in ipairs(sessions or {}) do
    table.insert(out, { session = session, depth = depth })
    M.flatten(session.workers, depth + 1, out)
  end
  return out
end

--- How a listed worker's delegation went, when it did not simply do its task (`delegation_status`;
--- a stop's `cancelled` in words, as the worker line says it).
local DELEGATION = { failed = 'failed · ', cancelled = 'stopped · ', running = 'running · ', queued = 'queued · ' }

--- One line of the session picker; `alongside`: the costs of the picker's other lines, whose decimals
--- its cost shares (the daemon's exact figure, with as many decimals as the one that has most).
function M.describe(root, item, current_id, alongside)
  local s = item.session
  local marker = s.id == current_id and '●' or ' '
  local indent = string.rep('  ', item.depth) .. (item.depth > 0 and '↳ ' or '')
  local last = s.last_model ~= vim.NIL and models.short_name(root, s.last_model) or '-'
  -- the picker prints it (inputlist): a title's control characters made visible (^M, <202e>), as a
  -- question shows them (a worker's title is its task, the model's text)
  local title = (s.title ~= vim.NIL and s.title ~= '') and vim.fn.strtrans(s.title) or 'Untitled'
  -- the part Switchman estimated (calls cut short before the provider reported usage) is said, as VS Code's
  -- Sessions view and :Switchman workers say it: not shown as the provider's bill
  local usd = cost.line(s.cost_usd, s.estimated_usd, { alongside = alongside })
  return ('%s %s%s  %s  (%s%s · %s · %s)'):format(marker, indent, render.date(s.updated_at), title,
    DELEGATION[s.delegation_status] or '', render.turns(s.turn_count), usd, last)
end

--- Open the read-only transcript of a session.
function M.open(root, session_id)
  client.request(root, protocol.request.session, { session_id = session_id }, function(err, detail)
    if err then
      return client.notify_error(err, vim.log.levels.ERROR)
    end
    ui.scratch('switchman://session/' .. session_id, render.transcript(root, detail),
      { root = root, filetype = 'switchman_transcript', split = 'tab split' })
    ui.markdown(vim.api.nvim_get_current_buf())
  end)
end

--- Draw the open transcript of `session_id` again, where it is (no window is opened or focused,
--- the cursor stays): a worker's transcript opened while it ran showed it `running` for good.
--- Nothing when it is not open.
function M.refresh(root, session_id)
  local bufnr = ui.find_buffer('switchman://session/' .. session_id)
  if not bufnr or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  client.request(root, protocol.request.session, { session_id = session_id }, function(err, detail)
    if err or not vim.api.nvim_buf_is_valid(bufnr) then
      return
    end
    local cursors = {}
    for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
      cursors[win] = vim.api.nvim_win_get_cursor(win)
    end
    ui.fill(bufnr, render.transcript(root, detail))
    local last = vim.api.nvim_buf_line_count(bufnr)
    for win, cursor in pairs(cursors) do
      pcall(vim.api.nvim_win_set_cursor, win, { math.min(cursor[1], last), cursor[2] })
    end
  end)
end

--- Pick one of the workspace's sessions and open its transcript; workers are listed under
--- their planner when `include_workers` (default: the `show_worker_sessions` option).
--- `how` (optional) changes what is picked for: { prompt, on_choice(session) }.
function M.pick(root, include_workers, how)
  if include_workers == nil then
    include_workers = require('switchman.config').options.show_worker_sessions
  end
  how = how or {}
  local params = { workspace = workspace.uri(root), include_workers = include_workers }
  client.request(root, protocol.request.sessions, params, function(err, result)
    if err then
      return client.notify_error(err, vim.log.levels.ERROR)
    end
    local items = M.flatten(result.sessions)
    if #items == 0 then
      return vim.notify('Switchman: no sessions in this workspace yet.', vim.log.levels.INFO)
    end
    local costs = vim.tbl_map(function(item) -- one list: its costs share their decimals
      return item.session.cost_usd
    end, items)
    vim.ui.select(items, {
      prompt = how.prompt or 'Switchman sessions',
      kind = 'switchman.session',
      format_item = function(item)
        return M.describe(root, item, result.current_session_id, costs)
      end,
    }, function(choice)
      if choice then
        (how.on_choice or function(session)
          M.open(root, session.id)
        end)(choice.session)
      end
    end)
  end)
end

--- The ids of the workspace's top-level sessions, newest first, for `:Switchman resume <Tab>`:
--- asked of the daemon each time (a new session since the last <Tab> is there), waited for up to a
--- second; none without a running daemon. (A command-line completion is plain text: no titles.)
function M.completions(root)
  local ids = {}
  if not client.get(root) then
    return ids
  end
  client.await(function(done)
    local params = { workspace = workspace.uri(root), include_workers = false }
    client.request(root, protocol.request.sessions, params, function(err, result)
      for _, session in ipairs(not err and result and result.sessions or {}) do
        table.insert(ids, session.id)
      end
      done()
    end)
  end)
  return ids
end

--- Pick one of the workspace's sessions (top-level: a worker takes no messages) and continue
--- it in the chat; with `session_id`, or from a session's transcript buffer, continue that one.
function M.resume(root, session_id)
  local chat = require('switchman.chat')
  session_id = session_id or vim.api.nvim_buf_get_name(0):match('^switchman://session/(.+)$')
  if session_id then
    return chat.resume(root, session_id)
  end
  local open = chat.get(root)
  if open and open:still_running() then -- said before the picker, not after a session is picked
    return
  end
  M.pick(root, false, {
    prompt = 'Continue which session?',
    on_choice = function(session)
      chat.resume(root, session.id)
    end,
  })
end

return M
