-- 👍 / 👎 on the last answer (g+ / g- in the chat, :Switchman feedback): the daemon records it
-- in the workspace's pattern store, which `switchman patterns export` reads back.
local H = require('harness')
local chat_module = require('switchman.chat')
local workspace = require('switchman.workspace')
local client = require('switchman.client')
local render = require('switchman.render')
local ui = require('switchman.ui')

local root = workspace.normalize(vim.env.SWITCHMAN_TEST_WORKSPACE)
local chat
local rated = {}

--- Send `message` and wait for its answer (the fake echoes what the model read: no `@alias`).
local function send_and_wait(message)
  vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.view.input)[1])
  vim.api.nvim_buf_set_lines(chat.view.input, 0, -1, false, { message })
  H.feed('<C-s>')
  H.wait_text(chat.view.transcript, 'Echo: ' .. message:gsub('^@%S+ ', ''), 40000) -- the first turn imports the SDK
  H.wait_for('the turn to end', function()
    return chat.turn == nil
  end)
  return H.check(chat.last_turn_id, 'the answer has a turn id')
end

--- g+ in the transcript, and the daemon's answer that it noted the 👍.
local function rate_up()
  vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.view.transcript)[1])
  H.notifications = {}
  H.feed('g+')
  H.wait_notification(nil, 'noted 👍 for the last answer')
end

--- Wait until the footer of `turn_id`'s answer in the chat ends with `rating` ('up', 'down'; nil: no rating).
local function wait_footer(turn_id, rating)
  local function footer()
    local row = ui.turn_footer(chat.view.transcript, turn_id)
    return row and H.lines(chat.view.transcript)[row + 1]
  end
  H.wait_for(('the footer of %s to show %s'):format(turn_id, rating or 'no rating'), function()
    local line = footer()
    if not line or line:find('👍', 1, true) and rating ~= 'up' or line:find('👎', 1, true) and rating ~= 'down' then
      return false
    end
    return rating == nil or vim.endswith(line, ' · ' .. (rating == 'up' and '👍' or '👎'))
  end, nil, function()
    return { footer = footer(), lines = H.lines(chat.view.transcript) }
  end)
end

--- The pattern store's rows by turn id, as the `switchman patterns export` CLI prints them.
local function exported_rows()
  local output = vim.fn.system({ vim.env.SWITCHMAN_TEST_SERVER, 'patterns', 'export' })
  H.eq(0, vim.v.shell_error, 'switchman patterns export exits 0: ' .. output)
  local rows = {}
  for _, line in ipairs(vim.split(output, '\n', { trimempty = true })) do
    local row = vim.json.decode(line)
    rows[row.turn_id] = row
  end
  return rows
end

return {
  {
    'g+ before any answer says there is nothing to rate yet',
    function()
      vim.cmd('Switchman chat')
      chat = H.check(chat_module.get(root), 'a chat for the workspace')
      vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.view.transcript)[1])
      H.feed('g+')
      H.wait_notification(nil, 'no answer to rate yet')
    end,
  },
  {
    'g+ in the transcript rates the last answer 👍 and the daemon says so',
    function()
      rated.up = send_and_wait('explain the login flow')
      wait_footer(rated.up, nil)
      rate_up()
      wait_footer(rated.up, 'up')
    end,
  },
  {
    'g- in the input area rates the next answer 👎',
    function()
      rated.down = send_and_wait('and the logout flow')
      H.check(rated.down ~= rated.up, 'a new turn', rated)
      vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.view.input)[1])
      vim.cmd('stopinsert')
      H.notifications = {}
      H.feed('g-')
      H.wait_notification(nil, 'noted 👎 for the last answer')
      wait_footer(rated.down, 'down')
      wait_footer(rated.up, 'up')
    end,
  },
  {
    'the pattern store holds both ratings: success 1.0 after 👍, 0.0 after 👎',
    function()
      local rows = exported_rows()
      local up, down = rows[rated.up], rows[rated.down]
      H.check(up and down, 'both turns were recorded', rows)
      H.eq(1, up.evidence.feedback, '👍 is stored as +1')
      H.eq(1.0, up.success, 'a 👍 turn scores 1.0')
      H.eq(-1, down.evidence.feedback, '👎 is stored as -1')
      H.eq(0.0, down.success, 'a 👎 turn scores 0.0')
      H.check(up.message_hash and not vim.inspect(rows):find('login flow', 1, true),
        'only hashes, never the message text', up)
    end,
  },
  {
    'redrawn from the session (another window changed a rating), the footers and the transcript show the daemon\'s',
    function()
      -- another window's daemon rates through the same database; this one stands in for it, then the
      -- switchman/sessionChanged it would get is handled as the chat handles it
      local err = client.request_sync(root, 'switchman/feedback', { turn_id = rated.up, rating = 'down' })
      H.eq(nil, err, 'the daemon took the 👎')
      chat:session_changed({ session_id = chat.session_id })
      wait_footer(rated.up, 'down')
      wait_footer(rated.down, 'down')
      local _, detail = client.request_sync(root, 'switchman/session', { session_id = chat.session_id })
      local headings = vim.tbl_filter(function(line)
        return line:find('^## Turn')
      end, vim.tbl_map(function(entry)
        return entry[1]
      end, render.transcript(root, detail)))
      H.eq(2, #headings, 'two turns', headings)
      H.check(vim.endswith(headings[1], ' · 👎') and vim.endswith(headings[2], ' · 👎'), 'both headings say 👎', headings)
      client.request_sync(root, 'switchman/feedback', { turn_id = rated.up, rating = 'none' })
      _, detail = client.request_sync(root, 'switchman/session', { session_id = chat.session_id })
      local first = render.transcript(root, detail)
      for _, entry in ipairs(first) do
        if entry[1]:find('^## Turn 1 ') then
          H.check(not entry[1]:find('👍', 1, true) and not entry[1]:find('👎', 1, true), 'unrated: no mark', entry)
        end
      end
      chat:session_changed({ session_id = chat.session_id })
      wait_footer(rated.up, nil)
    end,
  },
  {
    'a :Switchman sessions transcript already open shows a rating changed here (g+) or in another window',
    function()
      local session_id = chat.session_id
      require('switchman.sessions').open(root, session_id)
      local bufnr
      local function headings()
        bufnr = bufnr or ui.find_buffer('switchman://session/' .. session_id)
        return bufnr and vim.tbl_filter(function(line)
          return line:find('^## Turn')
        end, H.lines(bufnr)) or {}
      end
      --- Wait until the transcript's heading of turn `n` ends with `mark` (nil: no rating).
      local function wait_heading(n, mark)
        H.wait_for(('turn %d heading %s'):format(n, mark or 'unrated'), function()
          local line = headings()[n]
          if not line then
            return false
          end
          if mark then
            return vim.endswith(line, ' · ' .. mark)
          end
          return not line:find('👍', 1, true) and not line:find('👎', 1, true)
        end, nil, headings)
      end
      wait_heading(1, nil)
      wait_heading(2, '👎')
      local transcript_tab = vim.api.nvim_get_current_tabpage()
      rate_up() -- this window: the last answer (turn 2) 👎 -> 👍
      wait_heading(2, '👍')
      -- another window's daemon rates turn 1 through the same database; this daemon announces it
      -- (switchman/sessionChanged), as delivered to the LSP client here
      H.eq(nil, client.request_sync(root, 'switchman/feedback', { turn_id = rated.up, rating = 'down' }), 'the daemon took the 👎')
      local lsp = client.get(root)
      lsp.handlers['switchman/sessionChanged'](nil, { workspace = vim.uri_from_fname(root), session_id = session_id },
        { client_id = lsp.id, method = 'switchman/sessionChanged' })
      wait_heading(1, '👎')
      H.eq(2, #headings(), 'the same two turns', headings())
      vim.cmd('tabclose ' .. vim.api.nvim_tabpage_get_number(transcript_tab))
      -- the ratings as they were, for the tests below
      client.request_sync(root, 'switchman/feedback', { turn_id = rated.down, rating = 'down' })
      client.request_sync(root, 'switchman/feedback', { turn_id = rated.up, rating = 'none' })
    end,
  },
  {
    'after a command\'s reply (/cost) g+ rates nothing: the last answer is not a model turn',
    function()
      vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.view.input)[1])
      vim.api.nvim_buf_set_lines(chat.view.input, 0, -1, false, { '/cost' })
      H.feed('<C-s>')
      H.wait_text(chat.view.transcript, 'This session', 20000)
      H.wait_for('the command to end', function()
        return chat.turn == nil
      end)
      vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.view.transcript)[1])
      H.notifications = {}
      H.feed('g+')
      H.wait_notification(nil, 'no answer to rate yet')
      H.eq(0.0, exported_rows()[rated.down].success, 'the 👎 turn before the command keeps its 👎')
    end,
  },
  {
    'after gn (a new, empty session) g+ does not rate the old session\'s answer',
    function()
      rated.again = send_and_wait('one more question')
      vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.view.transcript)[1])
      H.feed('gn')
      H.wait_text(chat.view.transcript, 'New session', 20000)
      H.notifications = {}
      H.feed('g-')
      H.wait_notification(nil, 'no answer to rate yet')
      H.eq(0.7, exported_rows()[rated.again].success, 'the old session\'s answer stays unrated')
    end,
  },
  {
    'a turn that failed before answering anything has nothing to rate (a 👍 there was stored as a success)',
    function()
      H.fake('POST', '/_fake/reset')
      H.script({ { kind = 'error', status = 400, message = 'bad request body' } })
      vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.view.input)[1])
      vim.api.nvim_buf_set_lines(chat.view.input, 0, -1, false, { 'this fails at the provider' })
      H.feed('<C-s>')
      H.wait_text(chat.view.transcript, 'the provider rejected the request (400)', 20000)
      H.wait_for('the turn to end', function()
        return chat.turn == nil
      end)
      vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.view.transcript)[1])
      H.notifications = {}
      H.feed('g+')
      H.wait_notification(nil, 'the last turn ended before answering anything: there is nothing to rate')
      for _, row in pairs(exported_rows()) do
        H.check(row.evidence.feedback == vim.NIL or row.evidence.status ~= 'failed', 'no failed turn rated', row)
      end
      -- the failed message came back to the input, and the session keeps it for the next turn: start anew
      vim.api.nvim_buf_set_lines(chat.view.input, 0, -1, false, {})
      H.feed('gn')
      H.wait_for('a new session', function()
        return not H.text(chat.view.transcript):find('this fails at the provider', 1, true)
      end, 20000)
    end,
  },
  {
    'a reloaded transcript rates its last answer, unless it ends with a command or worker reply',
    function()
      local last = chat_module.last_answered_turn
      local user, answer = { role = 'user', turn_id = 't1' }, { role = 'assistant', turn_id = 't1' }
      H.eq('t1', last({ messages = { user, answer } }), 'the last message answers turn t1')
      H.eq(nil, last({ messages = { user, answer, { role = 'user', turn_id = vim.NIL },
        { role = 'assistant', turn_id = vim.NIL } } }), 'a /delegate exchange ends it')
      H.eq(nil, last({ messages = { user } }), 'a question with no answer yet')
      H.eq(nil, last({}), 'an empty session')
    end,
  },
  {
    "a learned suggestion a rule outranked shows under the badge, a '>' line each; /route override runs it",
    function()
      -- Three liked answers from haiku to billing-parser requests; then a rule sends such a
      -- request to sonnet, and the pattern store's disagreement (a banner of four lines) is shown.
      local routing = assert(io.open(vim.env.SWITCHMAN_CONFIG_DIR .. '/routing.yaml', 'w'))
      routing:write(table.concat({
        'rules:',
        '  - {name: invoices on sonnet, when: {message_matches: invoice}, use: sonnet}',
        'pattern: {cost_weight: 0.05, min_confidence: 0.05, min_sample_size: 3, neighbors: 10}',
        'pattern_disagreement: {surface: true, min_confidence: 0.05, min_sample_size: 3}',
        '',
      }, '\n'))
      routing:close()
      for i = 1, 3 do
        send_and_wait('@haiku refactor the billing parser step ' .. i)
        rate_up()
      end
      send_and_wait('refactor the billing parser invoice code')
      local suggestion = {
        '## Switchman [sonnet · rule: invoices on sonnet]',
        '> ⚠ → Routing to anthropic:claude-sonnet-4-6 per rule "invoices on sonnet"',
      }
      local function shows_the_banner()
        local lines = H.lines(chat.view.transcript)
        for i, line in ipairs(lines) do
          if line == suggestion[1] then
            return lines[i + 1] == suggestion[2] and lines[i + 2]:find('^> Pattern store suggests anthropic:claude%-haiku%-4%-5')
              and lines[i + 3] == '> /route override to use anthropic:claude-haiku-4-5 for this turn'
              and lines[i + 4] == '> /route ignore to dismiss'
              and lines[i + 5] == 'Echo: refactor the billing parser invoice code'
              and lines[i + 6]:find('^  sonnet · %$')
          end
        end
      end
      H.wait_for('the suggestion under the badge, then the answer and its cost line', shows_the_banner, nil,
        function()
          return H.lines(chat.view.transcript)
        end)
      vim.api.nvim_buf_set_lines(chat.view.input, 0, -1, false, { '/route override' })
      chat:submit()
      H.wait_text(chat.view.transcript, '## Switchman [haiku · /route override]')
      H.wait_for('the override to end', function()
        return chat.turn == nil
      end)
      chat.view:clear()
      chat:reload()
      H.wait_for('the stored session drawn with the suggestion', shows_the_banner, nil, function()
        return H.lines(chat.view.transcript)
      end)
    end,
  },
  {
    ':Switchman feedback none takes back the rating of the last answer (a g+ by mistake)',
    function()
      rated.back = send_and_wait('rate this and take it back')
      rate_up()
      H.eq(1, exported_rows()[rated.back].evidence.feedback, 'rated 👍')
      wait_footer(rated.back, 'up')
      vim.cmd('Switchman feedback none')
      H.wait_notification(nil, 'took back the rating of the last answer')
      wait_footer(rated.back, nil)
      H.eq(vim.NIL, exported_rows()[rated.back].evidence.feedback, 'no rating any more')
    end,
  },
  {
    ':Switchman feedback rejects anything but up, down or none',
    function()
      H.notifications = {}
      vim.cmd('Switchman feedback maybe')
      H.wait_notification(vim.log.levels.ERROR, 'feedback is "up", "down" or "none"')
    end,
  },
}
