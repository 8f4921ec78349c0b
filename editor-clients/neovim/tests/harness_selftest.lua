-- Proves the harness fails a run when an error happens where xpcall cannot see it
-- (tests/editors/test_neovim.py expects this run to fail).
return {
  {
    'an error inside a scheduled callback',
    function()
      vim.schedule(function()
        error('boom in a callback')
      end)
      vim.wait(50, function()
        return false
      end, 10)
    end,
  },
}
