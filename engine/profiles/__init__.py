"""Agent profiles: named sets of instructions, tools, skills, model policy and approval mode,
resolved per session (session override → workspace default → global default)."""
