/** The chat webview's HTML: a strict Content-Security-Policy, one script allowed by nonce. */

export interface ChatHtmlOptions {
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
}

export function chatHtml(options: ChatHtmlOptions): string {
  const csp = [
    "default-src 'none'",
    `img-src ${options.cspSource} https: data:`,
    `style-src ${options.cspSource}`,
    `font-src ${options.cspSource}`,
    `script-src 'nonce-${options.nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="${csp}">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <link href="${options.styleUri}" rel="stylesheet">
  <title>Switchman Chat</title>
</head>
<body>
  <header class="toolbar">
    <select id="workspace" title="Workspace folder this chat belongs to" hidden></select>
    <span id="session" class="session"></span>
    <button id="new-chat" class="secondary" title="Start a new chat session (switchman/newSession)">New chat</button>
  </header>
  <div id="offline" class="offline" role="alert" hidden>
    <span>The Switchman daemon is not running.</span>
    <button id="restart" class="secondary">Restart</button>
    <button id="settings" class="secondary">Settings</button>
  </div>
  <main id="transcript" class="transcript" aria-live="polite" aria-busy="true"></main>
  <div id="empty" class="empty">
    <p>Ask anything. Switchman picks the model for each message and says why.</p>
    <p>Start with <code>@alias</code> (e.g. <code>@haiku</code>) to choose the model for one message, or type <code>/help</code> for commands such as <code>/model</code>, <code>/rules check</code> and <code>/cost</code>.</p>
  </div>
  <footer class="composer">
    <div id="preview" class="preview" aria-live="polite"></div>
    <textarea id="input" rows="2" placeholder="Message Switchman — Enter to send, Shift+Enter for a new line" aria-label="Message"></textarea>
    <div class="actions">
      <button id="send" title="Send (Enter)">Send</button>
      <button id="stop" class="danger" title="Stop the answer (switchman/cancel)" hidden>Stop</button>
    </div>
  </footer>
  <script nonce="${options.nonce}" src="${options.scriptUri}"></script>
</body>
</html>`;
}
