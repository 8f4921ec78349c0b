--- Delegations in the chat: one line per worker that updates in place while the worker runs
--- (`switchman/delegation`), and `:Switchman workers` to list the current session's workers,
--- open one's transcript or stop one (`switchman/cancel` with the worker's turn id; for a
--- delegation still waiting to start, for a worker slot or then for the user's approval, with its
--- planner's turn id and tool use id).
local client = require('switchman.client')
local cost = require('switchman.cost')
local models = require('switchman.models')
local protocol = require('switchman.protocol')
local ui = require('switchman.ui')
local workspace = require('switchman.workspace')

local M = {}

--- Where each worker's line is: an extmark per delegation, in its own namespace.
local ns = vim.api.nvim_create_namespace('switchman_workers')

local ICONS = { queued = '…', awaiting_approval = '…', elsewhere = '…', running = '⟳', completed = '✓', failed = '✗', cancelled = '■' }
local HIGHLIGHT = {
  queued = 'SwitchmanNotice', awaiting_approval = 'SwitchmanNotice', elsewhere = 'SwitchmanNotice', running = 'SwitchmanTool',
  completed = 'SwitchmanTool', failed = 'SwitchmanError', cancelled = 'SwitchmanNotice',
}
--- A status in words, where its name is not one.
local WORDS = { awaiting_approval = 'awaiting approval', elsewhere = 'in another window' }

--- Whether a delegation waits to start: for a free worker slot (`queued`), then, when its worker
--- may change things, for the user's approval (`awaiting_approval`). It has no worker turn yet.
function M.waits_to_start(status)
  return status == 'queued' or status == 'awaiting_approval'
end

local function present(v)
  return v ~= nil and v ~= vim.NIL
end

local clip = ui.clip

--- `$0.0123` (four decimals below a cent, two above); below $0.001 two significant digits,
--- `$0.00012`, `$0.000015`, as VS Code's card and the answer's footer (`incl. workers $0.00012`)
--- show them: a cost is never shown as `$0.0000`, nor the same worker as `$0.0001` there.
function M.usd(amount)
  local n = tonumber(amount) or 0
  if n > 0 and n < 0.001 then
    local digits = 1 - math.floor(math.log10 and math.log10(n) or math.log(n, 10))
    return ('$' .. ('%.' .. digits .. 'f'):format(n):gsub('0+$', ''))
  end
  return n > 0 and n < 0.01 and ('$%.4f'):format(n) or ('$%.2f'):format(n)
end

--- The tier a worker runs on (`worker_tier` once routed, else the one asked for), and the one asked
--- for when the tier floor capped it: `balanced (capped from deep)`.
function M.tier(update)
  local asked = update.tier or '?'
  local runs = present(update.worker_tier) and update.worker_tier or asked
  if update.floor_applied == true and runs ~= asked then
    return ('%s (capped from %s)'):format(runs, asked)
  end
  return runs
end

--- The one line a delegation shows, e.g.
--- `  ⟳ worker fast · haiku · running · 1 turn · $0.00042 · 1.2s — Rename foo — calling read_file`, or
--- while it waits for a worker slot
--- `  … worker fast · waiting for a worker slot · queued · 0 turns · $0.00 · 0.4s — Rename foo — waiting for a free worker: 2 of 2 running`,
--- then, when its worker may change things, `  … worker fast · waiting for approval · awaiting approval · …`.
--- `alongside`: the costs of the lines shown with it (its turn's), whose decimals its cost shares.
function M.line(root, update, alongside)
  -- A worker that ended without a model never started (denied, stopped while it waited, no
  -- model for its tier): it is not still choosing one.
  local model = present(update.model_name) and update.model_name
    or present(update.model) and models.short_name(root, update.model)
    or update.status == 'queued' and 'waiting for a worker slot'
    or update.status == 'awaiting_approval' and 'waiting for approval'
    or update.status == 'elsewhere' and 'waiting to start'
    or update.status == 'running' and 'choosing a model' or 'not started'
  local turns = tonumber(update.turns) or 0
  local parts = {
    ('%s worker %s'):format(ICONS[update.status] or '?', M.tier(update)),
    model,
    WORDS[update.status] or update.status,
    ('%d turn%s'):format(turns, turns == 1 and '' or 's'),
    -- the part Switchman estimated (calls cut short before the provider reported usage) is named
    cost.line(update.cost_usd, update.estimated_usd, { money = M.usd, alongside = alongside }),
  }
  if present(update.elapsed_seconds) then
    table.insert(parts, ('%.1fs'):format(tonumber(update.elapsed_seconds) or 0))
  end
  local text = '  ' .. table.concat(parts, ' · ') .. ' — ' .. clip(update.task, 60)
  if update.status == 'running' and present(update.activity) and update.activity ~= '' then
    text = text .. ' — ' .. clip(update.activity, 60)
  elseif update.status == 'queued' then
    text = text .. ' — ' .. clip(present(update.detail) and update.detail or 'waiting for a free worker', 80)
  elseif update.status == 'awaiting_approval' then
    text = text .. ' — ' .. clip(present(update.detail) and update.detail or 'waiting for your approval to start', 80)
  elseif present(update.error) then
    -- the code names the failure mode (docs/delegation.md); the detail says what happened, as
    -- VS Code's card does. A stop's code is said in words: `cancelled_by_user` also ends a worker
    -- Switchman stopped as it exited, and read as if the user had stopped it.
    local code = update.error == 'cancelled_by_user' and 'stopped' or update.error
    local why = present(update.detail) and update.detail ~= '' and (code .. ': ' .. update.detail) or code
    text = text .. ' — ' .. clip(why, 120)
  end
  return text
end

--- Seconds since 1970 of an ISO 8601 UTC time (`2026-05-08T14:20:03.120Z`); nil if it is none.
local function epoch(iso)
  local y, mo, d, h, mi, sec = tostring(iso):match('^(%d+)-(%d+)-(%d+)T(%d+):(%d+):([%d.]+)')
  if not y then
    return nil
  end
  y, mo = tonumber(y), tonumber(mo)
  if mo <= 2 then
    y = y - 1
  end
  -- days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil)
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local doy = math.floor((153 * ((mo + 9) % 12) + 2) / 5) + tonumber(d) - 1
  local days = era * 146097 + yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy - 719468
  return days * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(sec)
end

--- How long a recorded delegation's worker ran: known once the session dated its end (`ended_at`).
function M.recorded_seconds(record)
  if record.worker_session_id == '' then
    return nil -- a worker's time is its run: one that never started a worker has none
  end
  local from = present(record.started_at) and epoch(record.started_at)
  local to = present(record.ended_at) and epoch(record.ended_at)
  return from and to and to >= from and to - from or nil
end

--- The session's record of each delegation (`delegations` of `switchman/session`), by id.
local function records(detail)
  local out = {}
  for _, record in ipairs(present(detail.delegations) and detail.delegations or {}) do
    out[record.tool_use_id] = record
  end
  return out
end

local function workers_by_call(detail)
  local out = {}
  for _, worker in ipairs(present(detail.cost) and detail.cost.workers or {}) do
    if present(worker.parent_tool_use_id) then
      out[worker.parent_tool_use_id] = worker
    end
  end
  return out
end

--- The workers of a stored session's turns (`cost.workers` rows: `cost_usd`, `estimated_usd`), by turn
--- id: a turn's footer includes their cost, as it did live.
function M.stored_by_turn(detail)
  local turn_of, out = {}, {}
  for _, message in ipairs(detail.messages or {}) do
    for _, block in ipairs(present(message.turn_id) and message.content or {}) do
      if block.type == 'tool_use' and block.name == 'delegate' then
        turn_of[block.id] = message.turn_id
      end
    end
  end
  for id, worker in pairs(workers_by_call(detail)) do
    local turn = turn_of[id]
    if turn then
      out[turn] = out[turn] or {}
      table.insert(out[turn], worker)
    end
  end
  return out
end

--- The lines of the questions a delegation's worker asked and their answers, oldest first
--- (`approvals` of its record; absent from older daemons), to go under its line.
function M.questions(record)
  local render = require('switchman.render')
  local out = {}
  for _, approval in ipairs(present(record.approvals) and record.approvals or {}) do
    vim.list_extend(out, render.worker_approval_lines(approval))
  end
  return out
end

--- The worker lines of a stored session (`switchman/session`), by `delegate` tool-use id:
--- each call's tier (after the tier floor, as recorded) and task with its worker's recorded
--- model, turns and cost. A call refused for its arguments (`delegate refused: …`) started no
--- worker and has no record: it gets no line, as live (its tool line shows the refusal).
function M.stored(root, detail)
  local calls, results, refused, turn_of, out = {}, {}, {}, {}, {}
  for _, message in ipairs(detail.messages or {}) do
    for _, block in ipairs(message.content or {}) do
      if block.type == 'tool_use' and block.name == 'delegate' then
        calls[block.id] = type(block.input) == 'table' and block.input or {}
        turn_of[block.id] = present(message.turn_id) and message.turn_id or false
      elseif block.type == 'tool_result' then
        -- the planner was told `delegate failed: <error>`; a stopped worker is `cancelled_by_user`
        local failure = block.is_error == true and (tostring(block.content or ''):match('^delegate failed: ([%w_]+)') or 'failed')
        results[block.tool_use_id] = failure or false
        refused[block.tool_use_id] = block.is_error == true
          and tostring(block.content or ''):find('^delegate refused: ') ~= nil
      end
    end
  end
  local workers, recorded, shown, costs = workers_by_call(detail), records(detail), {}, {}
  local running = {} -- turns still running: another window's, drawn here before they ended
  for _, turn in ipairs(present(detail.turns) and detail.turns or {}) do
    running[turn.id] = turn.status == 'running' or nil
  end
  for id, input in pairs(calls) do
    local worker, record = workers[id] or {}, recorded[id] or {}
    if refused[id] and not present(record.status) and not workers[id] then
      goto next_call
    end
    local failure = results[id]
    local status = (failure == nil or failure == 'cancelled_by_user') and 'cancelled' or failure and 'failed' or 'completed'
    if failure == nil and running[turn_of[id]] and not workers[id] then
      status = 'elsewhere' -- its window asks for its approval, or starts its worker: nothing is recorded yet
    end
    if present(record.status) then -- how the session recorded it ended (`interrupted` when its daemon died)
      status, failure = record.status, present(record.error) and record.error or nil
    end
    local update = {
      tier = input.tier, worker_tier = record.worker_tier, floor_applied = record.floor_applied, task = input.task,
      model = present(worker.model) and worker.model or record.model, turns = worker.turns or 0,
      cost_usd = worker.cost_usd or '0', estimated_usd = worker.estimated_usd, status = status, error = failure or nil,
      elapsed_seconds = M.recorded_seconds(record),
      -- still waiting, or why it ended (an interrupted one's detail is its turn's own failure)
      detail = present(record.detail) and record.error ~= 'interrupted' and record.detail or nil,
    }
    shown[id], update.turn_id = { update = update, record = record }, turn_of[id]
    costs[turn_of[id]] = costs[turn_of[id]] or {}
    table.insert(costs[turn_of[id]], update.cost_usd) -- a turn's worker lines share their decimals, as live
    ::next_call::
  end
  for id, item in pairs(shown) do
    -- `unanswered`: no result was stored (the daemon died first); the line goes under the call
    out[id] = { M.line(root, item.update, costs[item.update.turn_id]), hl = HIGHLIGHT[item.update.status],
      unanswered = results[id] == nil, questions = M.questions(item.record) }
  end
  return out
end

--- The user's own delegations (`/delegate`) of a stored session, oldest first, each as
--- `{ started_at, line }`: they have no tool call, so the session's records are all there is.
function M.stored_by_user(root, detail)
  local workers, out, costs = workers_by_call(detail), {}, {}
  for _, record in ipairs(present(detail.delegations) and detail.delegations or {}) do
    if record.source == 'user' then
      local worker = workers[record.tool_use_id] or {}
      local update = vim.tbl_extend('force', record, {
        model = present(worker.model) and worker.model or record.model, turns = worker.turns or 0,
        cost_usd = worker.cost_usd or '0', estimated_usd = worker.estimated_usd,
        elapsed_seconds = M.recorded_seconds(record) or vim.NIL,
      })
      table.insert(costs, update.cost_usd)
      table.insert(out, { started_at = record.started_at, task = record.task, update = update,
        approval = record.approval,
        superseded_approvals = record.superseded_approvals, questions = M.questions(record) })
    end
  end
  for _, item in ipairs(out) do -- their lines share their decimals, as live (they belong to no turn)
    item.line = { M.line(root, item.update, costs), hl = HIGHLIGHT[item.update.status] }
    item.update = nil
  end
  return out
end

--- Where a new delegation's line goes when a later call of its turn already has one (a call
--- beyond `max_concurrent_workers` is announced queued before the first call's worker starts): the
--- row of the first such line, so the lines keep the order of the calls; nil: at the end.
local function row_before_later_calls(chat, update)
  local order = chat.call_order and chat.call_order.by_id or {}
  local own = order[update.tool_use_id]
  local row = nil
  for id, known in pairs(chat.workers) do
    if own and order[id] and order[id] > own and known.update.turn_id == update.turn_id then
      local pos = vim.api.nvim_buf_get_extmark_by_id(chat.view.transcript, ns, known.mark, {})
      local first = pos and pos[1] and pos[1] - (known.above or 0) -- its start questions are above it
      if first and (row == nil or first < row) then
        row = first
      end
    end
  end
  return row
end

--- Insert lines (`entries`: a new delegation's line, a question's) at `row`, moving the lines below
--- them (and the delegations' marks) down.
local function insert_lines(chat, row, entries)
  local bufnr = chat.view.transcript
  local below = {}
  for _, known in pairs(chat.workers) do
    local pos = vim.api.nvim_buf_get_extmark_by_id(bufnr, ns, known.mark, {})
    if pos and pos[1] and pos[1] >= row then
      table.insert(below, { known = known, row = pos[1] })
    end
  end
  ui.put(bufnr, row, row, entries)
  for _, moved in ipairs(below) do
    vim.api.nvim_buf_del_extmark(bufnr, ns, moved.known.mark)
    moved.known.mark = vim.api.nvim_buf_set_extmark(bufnr, ns, moved.row + #entries, 0, { right_gravity = false })
  end
  chat.view.followed_row = chat.view.followed_row + #entries
  chat.view:follow()
end

--- A question the worker of session `worker_session_id` asked was answered (`record`: its title,
--- command, diff, outcome and reason): its line, and an edit's diff under it, go under the worker's
--- line in the chat, after the ones it asked before, as the chat drawn from the session shows them.
--- `known.asked` counts the lines under the worker's line; `known.questions` has each question's
--- line (by its offset from the worker's line). Nothing for a worker not shown here.
function M.asked(root, worker_session_id, record)
  local chat = require('switchman.chat').get(root)
  for _, known in pairs(chat and chat.workers or {}) do
    if known.update.worker_session_id == worker_session_id then
      local pos = vim.api.nvim_buf_get_extmark_by_id(chat.view.transcript, ns, known.mark, {})
      if pos and pos[1] then
        local lines = require('switchman.render').worker_approval_lines(record)
        local offset = (known.asked or 0) + 1
        if record.id ~= nil then
          known.questions = known.questions or {}
          known.questions[record.id] = offset
        end
        insert_lines(chat, pos[1] + offset, lines)
        known.asked = offset - 1 + #lines
      end
      return
    end
  end
end

--- The answered start questions of `/delegate`s whose worker line is not shown yet, by delegation
--- id, oldest first (one that did not wait for a worker slot is shown once its worker starts, after
--- the question; asked again when its worker's model changed meanwhile, after both).
local start_questions = {}

--- Set row `row` of the transcript to `text` (its marks stay where they are); false when it was so.
local function set_line(bufnr, row, text)
  local old = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  if old == text then
    return false
  end
  local modifiable = vim.bo[bufnr].modifiable
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_text(bufnr, row, 0, row, #old, { text })
  vim.bo[bufnr].modifiable = modifiable
  return true
end

--- A `/delegate`'s question a stop cut short (withdrawn: no reason) says why as the daemon records
--- it, from its delegation's end (`cancelled while waiting for approval`); true when it learnt that.
local function stop_reason(record, update)
  if record.outcome ~= 'stopped' or present(record.reason) or not present(update.detail)
      or update.status == 'running' or M.waits_to_start(update.status) then
    return false
  end
  record.reason = update.detail
  return true
end

--- The lines of a `/delegate`'s answered question (`record`), to go right above its worker's line
--- (`update`: its delegation now), and what `known.start_question` keeps of them.
local function start_question_lines(record, update)
  stop_reason(record, update)
  local lines = require('switchman.render').approval_lines(record, 'delegate')
  return lines, { record = record, count = #lines }
end

--- The question a `/delegate` asked before its worker started (the worker may change files) was
--- answered (`record`: its title, tier, worker tools, outcome and reason): its lines go right above
--- the worker's line, as the chat drawn from the session shows them (kept until that line shows).
--- Nothing for a planner's delegation: its questions come with its call's result (`M.start_answered`).
function M.start_asked(root, tool_use_id, record)
  local chat = require('switchman.chat').get(root)
  local known = chat and chat.workers and chat.workers[tool_use_id]
  if not known then
    start_questions[tool_use_id] = start_questions[tool_use_id] or {}
    table.insert(start_questions[tool_use_id], record)
    return
  end
  local pos = vim.api.nvim_buf_get_extmark_by_id(chat.view.transcript, ns, known.mark, {})
  if known.update.source == 'user' and pos and pos[1] then
    local lines
    lines, known.start_question = start_question_lines(record, known.update)
    insert_lines(chat, pos[1], lines)
    known.above = (known.above or 0) + #lines
  end
end

--- A planner's `delegate` call ended (its `tool_result`): the questions its start asked (`lines`,
--- answered; the earlier ones superseded when asked again) go right above its worker's line, where
--- the chat drawn from the session has them: they were asked before the worker started. False when
--- the chat shows no line for it (the caller puts them under the call's result line).
function M.start_answered(chat, tool_use_id, lines)
  local known = chat.workers and chat.workers[tool_use_id]
  local pos = known and chat.view:valid() and vim.api.nvim_buf_get_extmark_by_id(chat.view.transcript, ns, known.mark, {})
  if not (pos and pos[1]) then
    return false
  end
  insert_lines(chat, pos[1], lines)
  known.above = (known.above or 0) + #lines
  return true
end

--- A `/delegate` whose question was withdrawn (shown without a reason) ended: the question's line
--- says why, as its end does.
local function restate_start_question(chat, known, update)
  local asked = known.start_question
  if not asked or not stop_reason(asked.record, update) then
    return
  end
  local pos = vim.api.nvim_buf_get_extmark_by_id(chat.view.transcript, ns, known.mark, {})
  if pos and pos[1] then
    set_line(chat.view.transcript, pos[1] - asked.count,
      require('switchman.render').approval(asked.record, 'delegate')[1])
  end
end

--- The daemon's record of a question the worker asked (a `progress` update's `approval`): its line
--- says what the record says, as the chat drawn from the session will (an allowed edit of a file that
--- changed on disk meanwhile is `Not applied`, not the `Allowed once.` the answer drew).
local function recorded_question(chat, known, record)
  local index = type(record) == 'table' and known.questions and known.questions[record.id]
  local bufnr = chat.view.transcript
  local pos = index and vim.api.nvim_buf_get_extmark_by_id(bufnr, ns, known.mark, {})
  if pos and pos[1] then
    set_line(bufnr, pos[1] + index, require('switchman.render').worker_approval(record)[1])
  end
end

--- How long a delegation still running (or waiting to start) has run by now: the time of its last
--- update counted on since it came (the daemon updates a worker's line only as it works).
local function elapsed_now(update)
  if not present(update.elapsed_seconds) or not update.received_at then
    return update.elapsed_seconds
  end
  return (tonumber(update.elapsed_seconds) or 0) + (vim.loop.now() - update.received_at) / 1000
end

--- The turn a delegation belongs to (false for a `/delegate`'s: the user's own belong to none).
local function turn_of(update)
  return present(update.turn_id) and update.turn_id or false
end

--- The delegations of the chat's turn `turn_id` as their last updates have them (`cost_usd`,
--- `estimated_usd`): its footer includes their cost.
function M.of_turn(chat, turn_id)
  local out = {}
  for _, known in pairs(chat.workers or {}) do
    if turn_id and turn_of(known.update) == turn_id then
      table.insert(out, known.update)
    end
  end
  return out
end

--- The costs of the chat's delegations of `update`'s turn (with `update`'s own, once it is shown):
--- its worker lines show them with the same decimals, as `:Switchman workers` and VS Code do.
local function turn_costs(chat, update)
  local out, turn = {}, turn_of(update)
  for _, known in pairs(chat.workers or {}) do
    if turn_of(known.update) == turn then
      table.insert(out, known.update.cost_usd)
    end
  end
  return out
end

--- Draw a shown delegation's line again, from `shown` (its last update, or that update with its
--- time counted on); nothing when it reads as it did.
local function redraw(chat, known, shown)
  local bufnr = chat.view.transcript
  local pos = vim.api.nvim_buf_get_extmark_by_id(bufnr, ns, known.mark, {})
  if not pos or not pos[1] then
    return -- the line was cleared (new session)
  end
  local entry = { M.line(chat.root, shown, turn_costs(chat, shown)), hl = HIGHLIGHT[shown.status] or 'SwitchmanTool' }
  local row = pos[1]
  local old = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  if old == entry[1] then
    return
  end
  local modifiable = vim.bo[bufnr].modifiable
  vim.bo[bufnr].modifiable = true
  -- set_text keeps the extmark (and any line the answer streams after it) where it is.
  vim.api.nvim_buf_set_text(bufnr, row, 0, row, #old, { entry[1] })
  vim.bo[bufnr].modifiable = modifiable
  vim.api.nvim_buf_clear_namespace(bufnr, ns, row, row + 1)
  known.mark = vim.api.nvim_buf_set_extmark(bufnr, ns, row, 0, { right_gravity = false })
  vim.api.nvim_buf_add_highlight(bufnr, ns, entry.hl, row, 0, -1)
end

local function live(update)
  return update.status == 'running' or M.waits_to_start(update.status)
end

--- A delegation's last update, with its time counted on while it runs or waits.
local function now_shown(update)
  if live(update) and present(update.elapsed_seconds) then
    return vim.tbl_extend('force', update, { elapsed_seconds = elapsed_now(update) })
  end
  return update
end

--- Draw the other lines of `update`'s turn again: a cost that needs more decimals gives them to all.
local function redraw_turn(chat, update)
  for id, known in pairs(chat.workers) do
    if id ~= update.tool_use_id and turn_of(known.update) == turn_of(update) then
      redraw(chat, known, now_shown(known.update))
    end
  end
end

--- Once a second while a delegation of the chat runs or waits to start, its line's time goes on:
--- the daemon updates the line only as the worker works, and a worker waiting for its model (or a
--- delegation for a slot) showed the time of its last update, `0.3s`, for minutes.
local function keep_time(chat)
  if chat.worker_clock then
    return
  end
  local clock = vim.loop.new_timer()
  chat.worker_clock = clock
  clock:start(1000, 1000, vim.schedule_wrap(function()
    if chat.worker_clock ~= clock then
      return
    end
    local any = false
    for _, known in pairs(chat.view:valid() and chat.workers or {}) do
      if live(known.update) and present(known.update.elapsed_seconds) then
        any = true
        redraw(chat, known, now_shown(known.update))
      end
    end
    if not any then
      chat.worker_clock = nil
      clock:stop()
      clock:close()
    end
  end))
end

--- Show or update a delegation of the chat's running turn in its transcript.
function M.show(chat, update)
  chat.workers = chat.workers or {}
  update.received_at = update.received_at or vim.loop.now()
  if live(update) then
    keep_time(chat)
  end
  local known = chat.workers[update.tool_use_id]
  if known then
    recorded_question(chat, known, update.approval)
    restate_start_question(chat, known, update)
    known.update = update
    known.model_name = update.model_name or (present(update.model) and models.short_name(chat.root, update.model) or nil)
    redraw(chat, known, update)
    return redraw_turn(chat, update)
  end
  local entries, start_question = {}, nil
  local asked = start_questions[update.tool_use_id] -- a `/delegate`'s questions, answered: above its line
  start_questions[update.tool_use_id] = nil
  if asked and update.source == 'user' then
    for _, record in ipairs(asked) do -- (the last one's, right above the line, is kept: it may be restated)
      local lines
      lines, start_question = start_question_lines(record, update)
      vim.list_extend(entries, lines)
    end
  end
  local costs = turn_costs(chat, update)
  table.insert(costs, update.cost_usd)
  table.insert(entries, { M.line(chat.root, update, costs), hl = HIGHLIGHT[update.status] or 'SwitchmanTool' })
  local bufnr = chat.view.transcript
  local row = row_before_later_calls(chat, update)
  if row then
    insert_lines(chat, row, entries)
    row = row + #entries - 1
  else
    chat.view:append(entries)
    row = vim.api.nvim_buf_line_count(bufnr) - 1
  end
  local mark = vim.api.nvim_buf_set_extmark(bufnr, ns, row, 0, { right_gravity = false })
  chat.workers[update.tool_use_id] = { update = update, mark = mark, start_question = start_question,
    above = #entries - 1, model_name = present(update.model) and models.short_name(chat.root, update.model) or nil }
  redraw_turn(chat, update)
end

--- How the daemon records a delegation it ends as it exits (`:Switchman restart`), by its status then.
local EXITED = {
  running = 'Switchman stopped while this worker ran (the editor closed, reloaded or restarted it)',
  queued = 'Switchman stopped before this worker started (the editor closed, reloaded or restarted it)',
  awaiting_approval = 'cancelled while waiting for approval',
}

--- The daemon went away: a delegation it was running, or that waited to start, will never end
--- there, so its line stops saying `running` (or `queued`) and says how it ended, as the daemon's
--- record does: a daemon this Neovim stopped (`:Switchman restart`) ended it itself, as stopped
--- (`■ worker … cancelled … — stopped: Switchman stopped while this worker ran …`); one that
--- died did not (`✗ worker … failed … — interrupted`). `:Switchman workers` then offers no Stop for it.
--- `info`: the client's `exit` event (`expected`: this Neovim stopped it).
function M.daemon_stopped(chat, info)
  if not chat.view:valid() then
    return
  end
  local stopped = type(info) == 'table' and info.expected == true
  for _, known in pairs(chat.workers or {}) do
    local update = known.update
    local waiting = M.waits_to_start(update.status)
    if update.status == 'running' or waiting then
      local ending = { status = 'failed', error = 'interrupted',
        detail = waiting and 'Switchman stopped while it waited; it never started' or vim.NIL }
      if stopped then
        ending = { status = 'cancelled', error = 'cancelled_by_user', detail = EXITED[update.status] or EXITED.running }
      end
      M.show(chat, vim.tbl_extend('force', update, ending, {
        -- the name the line showed: the gone daemon's model list (aliases) is forgotten
        model_name = present(update.model) and known.model_name or nil, activity = vim.NIL,
        -- the time it ran until the daemon went: its last update's stopped with the daemon
        elapsed_seconds = elapsed_now(update),
      }))
    end
  end
end

--- The delegations this Neovim saw live, by worker session id (for Stop); one still queued for a
--- worker slot has no worker session yet: by its tool use id.
function M.live(chat)
  local out = {}
  for _, known in pairs(chat and chat.workers or {}) do
    local id = known.update.worker_session_id
    out[present(id) and id ~= '' and id or known.update.tool_use_id] = known.update
  end
  return out
end

--- Open a worker's transcript (`switchman/session` of the worker session).
function M.open(root, worker_session_id)
  require('switchman.sessions').open(root, worker_session_id)
end

--- Stop one worker: its planner carries on with a `cancelled_by_user` result. One still waiting to
--- start (for a worker slot, or for approval) is stopped there (named by its planner's turn and its
--- tool use id).
function M.stop(root, update)
  local params = { turn_id = update.worker_turn_id }
  if M.waits_to_start(update.status) and present(update.turn_id) then
    params = { turn_id = update.turn_id, tool_use_id = update.tool_use_id }
  elseif not present(update.worker_turn_id) then
    return vim.notify('Switchman: this worker has not started a turn yet.', vim.log.levels.WARN)
  end
  client.request(root, protocol.request.cancel, params, function(err, result)
    if err then
      return client.notify_error(err, vim.log.levels.WARN)
    end
    if not result.cancelled then
      local message, level = M.not_stopped(result.status)
      vim.notify(message, level)
    end
  end)
end

--- Why a Stop did not stop a worker, for each status `switchman/cancel` answers with
--- `cancelled: false`: the worker turn's final status, `ended` for a delegation that is no longer
--- waiting or running, or `starting` in the moment its worker is routed (it has no turn to stop yet).
local NOT_STOPPED = {
  starting = { 'its worker is being started and has no turn to stop yet; stop it again in a moment', vim.log.levels.WARN },
  ended = { 'the worker had already ended', vim.log.levels.INFO },
  completed = { 'the worker had already finished', vim.log.levels.INFO },
  failed = { 'the worker had already failed', vim.log.levels.INFO },
  cancelled = { 'the worker had already been stopped', vim.log.levels.INFO },
  interrupted = { 'the worker was interrupted: the daemon running it stopped before it ended', vim.log.levels.INFO },
}

--- The message (and its level) for a Stop answered `cancelled: false` with `status`.
function M.not_stopped(status)
  local known = NOT_STOPPED[status]
  if known then
    return 'Switchman: ' .. known[1] .. '.', known[2]
  end
  return ('Switchman: the worker was not stopped (%s).'):format(tostring(status)), vim.log.levels.WARN
end

--- What a row of the workers list shows of a live delegation (`item.live`), or nil for a stored one.
local function live_row(item)
  local live = item.live
  if not live then
    return nil
  end
  -- one still running or waiting: its time now, not at its last update (seconds ago, maybe)
  if (live.status == 'running' or M.waits_to_start(live.status)) and present(live.elapsed_seconds)
      and live.received_at then
    return vim.tbl_extend('force', live, { elapsed_seconds = elapsed_now(live) })
  elseif item.session then
    -- one that ended: its cost as recorded, which can have grown since its last update (the
    -- call a killed daemon cut off is charged by the next one)
    return vim.tbl_extend('force', live, {
      cost_usd = item.session.cost_usd, estimated_usd = item.session.estimated_usd,
      turns = item.session.turn_count or live.turns,
    })
  end
  return live
end

--- The cost a row of the workers list shows.
function M.row_cost(item)
  local live = live_row(item)
  return live and live.cost_usd or item.session.cost_usd
end

--- One row of the workers list: a stored worker session, or a live delegation. `alongside`: the costs
--- of the list's rows (M.row_cost), whose decimals its cost shares.
local function describe(root, item, alongside)
  local live = live_row(item)
  if live then
    return (M.line(root, live, alongside):gsub('^%s+', ''))
  end
  local s = item.session
  local record = item.record
  if record then -- how its delegation went, as the planner's session recorded it
    return (M.line(root, vim.tbl_extend('force', record, {
      model = present(record.model) and record.model or s.last_model, turns = s.turn_count or 0,
      cost_usd = s.cost_usd, detail = present(record.detail) and record.error ~= 'interrupted' and record.detail or vim.NIL,
      elapsed_seconds = M.recorded_seconds(record) or vim.NIL,
    }), alongside):gsub('^%s+', ''))
  end
  local model = present(s.last_model) and models.short_name(root, s.last_model) or '-'
  local title = present(s.title) and s.title ~= '' and s.title or 'Worker session'
  local usd = cost.usds(vim.list_extend({ s.cost_usd }, alongside or {}), M.usd)[1]
  return ('worker · %s · %d turn%s · %s — %s'):format(model, s.turn_count or 0, s.turn_count == 1 and '' or 's',
    usd, clip(title, 60))
end

--- One row of the workers list as the picker prints it (inputlist): the control characters of its task
--- and title made visible (`^M`, `<202e>`), as the question showed them.
function M.describe(root, item, alongside)
  return vim.fn.strtrans(describe(root, item, alongside))
end

--- The workers of `session_id` from a `switchman/sessions` answer, merged with the live ones
--- (a running worker may not be listed yet).
function M.items(sessions, session_id, live)
  local items, seen = {}, {}
  for _, session in ipairs(sessions or {}) do
    if session.id == session_id then
      for _, worker in ipairs(session.workers or {}) do
        seen[worker.id] = true
        table.insert(items, { session = worker, live = live[worker.id], id = worker.id })
      end
    end
  end
  for id, update in pairs(live) do
    if not seen[id] and update.session_id == session_id then
      table.insert(items, { live = update, id = id })
    end
  end
  return items
end

--- Whether a row of the workers list has a worker session (a transcript to open): a stored one, or a
--- live delegation whose worker was started. One waiting to start has none yet, and one that ended
--- before it started (stopped while queued, approval denied, no model for its tier) never will.
local function has_session(item)
  if item.session then
    return true
  end
  local id = item.live and item.live.worker_session_id
  return present(id) and id ~= ''
end

--- What a delegation that never started a worker says when picked. Its error can quote the planner's
--- tool call: its control characters made visible (`^M`, `<202e>`), as the question showed them.
function M.never_started(live)
  local why = present(live.error) and (': ' .. vim.fn.strtrans(live.error)) or ''
  return ('Switchman: this delegation never started a worker (%s%s), so it has no transcript.'):format(live.status, why)
end

local function act(root, item)
  local status = item.live and item.live.status
  local actions = has_session(item) and { 'Open transcript' } or {}
  if status == 'running' or M.waits_to_start(status) then
    table.insert(actions, 'Stop this worker')
  end
  if #actions == 0 then
    return vim.notify(M.never_started(item.live), vim.log.levels.INFO)
  end
  vim.ui.select(actions, { prompt = 'Worker', kind = 'switchman.worker_action' }, function(choice)
    if choice == 'Open transcript' then
      M.open(root, item.id)
    elseif choice == 'Stop this worker' then
      M.stop(root, item.live)
    end
  end)
end

--- `:Switchman workers`: pick one of the current session's workers, then open or stop it.
function M.pick(root)
  local chat = require('switchman.chat').get(root)
  local live = M.live(chat)
  local params = { workspace = workspace.uri(root), include_workers = true }
  client.request(root, protocol.request.sessions, params, function(err, result)
    if err then
      return client.notify_error(err, vim.log.levels.ERROR)
    end
    local current = chat and chat.session_id or result.current_session_id
    if chat and chat.turn and chat.turn.session_id then
      current = chat.turn.session_id
    end
    local items = M.items(result.sessions, present(current) and current or nil, live)
    if #items == 0 then
      return vim.notify('Switchman: this session has no workers yet.', vim.log.levels.INFO)
    end
    local function choose()
      local costs = vim.tbl_map(M.row_cost, items) -- one list: its costs share their decimals
      vim.ui.select(items, {
        prompt = 'Switchman workers',
        kind = 'switchman.worker',
        format_item = function(item)
          return M.describe(root, item, costs)
        end,
      }, function(choice)
        if choice then
          act(root, choice)
        end
      end)
    end
    if vim.tbl_isempty(vim.tbl_filter(function(item)
      return item.live == nil
    end, items)) then
      return choose()
    end
    -- workers this Neovim did not see run (an earlier Neovim's): their status from the planner's record
    client.request(root, protocol.request.session, { session_id = current }, function(e, detail)
      local by_worker = {}
      for _, record in ipairs(not e and detail and present(detail.delegations) and detail.delegations or {}) do
        if present(record.worker_session_id) and record.worker_session_id ~= '' then
          by_worker[record.worker_session_id] = record
        end
      end
      for _, item in ipairs(items) do
        item.record = item.live == nil and by_worker[item.id] or nil
      end
      choose()
    end)
  end)
end

--- A worker the user started with `/delegate` from this chat (it belongs to no turn): shown while
--- the command is answered, in the chat's session.
local function own_user_delegation(chat, update)
  if update.source ~= 'user' or present(update.turn_id) or not chat.turn or chat.turn.turn_id then
    return false
  end
  return not present(chat.session_id) or chat.session_id == update.session_id
end

client.on(protocol.notification.delegation, function(root, update)
  local chat = require('switchman.chat').get(root)
  if chat and own_user_delegation(chat, update) then
    M.show(chat, update)
  elseif chat and chat.turn and chat.turn.turn_id == update.turn_id then
    chat.turn.session_id = update.session_id
    M.show(chat, update)
  elseif chat and chat.workers and chat.workers[update.tool_use_id] then
    M.show(chat, update) -- the end of a delegation whose turn was just answered
  end
  if update.phase == 'ended' and present(update.worker_session_id) and update.worker_session_id ~= '' then
    require('switchman.sessions').refresh(root, update.worker_session_id) -- its transcript, if open
  end
end)

return M
