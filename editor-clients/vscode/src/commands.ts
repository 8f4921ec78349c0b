/** Every command the extension contributes, as one table of small handlers. */

import * as vscode from 'vscode';
import type { ChatController } from './chat/chatController';
import type { ChatViewProvider } from './chat/chatView';
import { sameWorkspace, type Folder, type WorkspaceFolders } from './common/host';
import type { ModelCommands } from './models/modelCommands';
import type { ProfileCommands } from './profiles/profileCommands';
import { requestFailure } from './protocol/errors';
import { SlashCommands } from './protocol/methods';
import type { SwitchmanClient } from './server/switchmanClient';
import { showDocument, SwitchmanDocuments } from './sessions/documents';
import { continuable } from './sessions/sessionNodes';
import type { SessionsTree } from './sessions/sessionsTree';
import type { TrustCommands } from './tools/trustCommands';

export interface CommandTargets {
  client: SwitchmanClient;
  chat: ChatController;
  chatView: ChatViewProvider;
  models: ModelCommands;
  profiles: ProfileCommands;
  sessions: SessionsTree;
  folders: WorkspaceFolders;
  output: vscode.OutputChannel;
  trust: TrustCommands;
}

type Handler = (...args: unknown[]) => unknown;

export function commandTable(t: CommandTargets): Record<string, Handler> {
  const withFolder = (run: (folder: Folder) => unknown): Handler => async (uri?: unknown) => {
    const folder = await chooseFolder(t.folders, typeof uri === 'string' ? uri : undefined);
    return folder ? run(folder) : undefined;
  };
  return {
    'switchman.openChat': () => t.chatView.reveal(true),
    'switchman.newChat': async () => {
      await t.chatView.reveal(true);
      if (t.chat.busy) {
        void vscode.window.showInformationMessage('Switchman: stop or wait for the running answer, then start a new chat.');
        return;
      }
      await t.chat.newChat();
    },
    'switchman.setModel': withFolder((folder) => t.models.pick(folder)),
    'switchman.clearModel': withFolder((folder) => t.models.set(folder, null)),
    'switchman.setProfile': withFolder((folder) => t.profiles.pick(folder)),
    'switchman.whyThisModel': withFolder((folder) => showDocument(SwitchmanDocuments.explanationUri(folder.uri))),
    'switchman.checkRules': async () => {
      await t.chatView.reveal();
      if (t.chat.busy) {
        void vscode.window.showInformationMessage('Switchman: wait for the running answer to finish, then check the rules.');
        return;
      }
      await t.chat.send(SlashCommands.rulesCheck);
    },
    'switchman.sendSelection': async () => {
      const attached = await t.chat.attachSelection();
      if (!attached) {
        void vscode.window.showInformationMessage('Switchman: open a file in a workspace folder to send its selection.');
        return;
      }
      if ('refused' in attached) {
        void vscode.window.showErrorMessage(`Switchman: not attached: ${attached.refused}`);
        return;
      }
      await t.chatView.reveal(true); // the next message is what the user types now
      void vscode.window.setStatusBarMessage(attached.again
        ? `Switchman: ${attached.label} was already attached: it goes once, as it is now`
        : `Switchman: ${attached.label} goes with your next message`, 5000);
    },
    'switchman.delegateSelection': async () => {
      if (t.chat.busy) {
        void vscode.window.showInformationMessage('Switchman: wait for the running answer to finish, then delegate.');
        return;
      }
      const instruction = await vscode.window.showInputBox({
        title: 'Switchman: Delegate Selection',
        prompt: 'What should the worker do with the selection? Leave empty if the selection itself is the task. '
          + 'Start with a tier (fast, balanced, deep) to choose the worker\'s models.',
        placeHolder: 'e.g. fast add docstrings',
      });
      if (instruction === undefined) return; // Escape: nothing is sent
      await t.chatView.reveal();
      if (!await t.chat.delegateSelection(instruction)) {
        void vscode.window.showInformationMessage('Switchman: select some text in a file of a workspace folder to delegate it.');
      }
    },
    'switchman.manageTrust': () => t.trust.manage(),
    'switchman.restartServer': () => t.client.restart(),
    'switchman.showOutput': () => t.output.show(true),
    'switchman.refreshSessions': () => t.sessions.reload(),
    'switchman.continueSession': async (node: unknown) => {
      const target = continuable(node);
      if (!target) return;
      await t.chatView.reveal(true);
      try {
        if (!await t.chat.resume(target.workspace, target.sessionId)) {
          void vscode.window.showInformationMessage('Switchman: stop or wait for the running answer, then continue that session.');
        }
      } catch (error) {
        void vscode.window.showErrorMessage(`Switchman: could not continue the session: ${requestFailure(error).message}`);
      }
    },
    'switchman.openSession': (sessionId: unknown, fileName: unknown, isWorker: unknown) => {
      if (typeof sessionId !== 'string') return;
      return showDocument(SwitchmanDocuments.transcriptUri(sessionId, typeof fileName === 'string' ? fileName : 'session.md',
        isWorker === true));
    },
  };
}

export function registerCommands(table: Record<string, Handler>): vscode.Disposable[] {
  return Object.entries(table).map(([id, handler]) => vscode.commands.registerCommand(id, handler));
}

/** The folder named by a status bar item, else the active editor's, else ask when there are several. */
async function chooseFolder(folders: WorkspaceFolders, uri?: string): Promise<Folder | undefined> {
  const all = folders.all();
  const named = uri ? all.find((f) => sameWorkspace(f.uri, uri)) : undefined;
  if (named) return named;
  if (all.length === 0) {
    void vscode.window.showWarningMessage('Switchman: open a folder first. Chats and models belong to a workspace folder.');
    return undefined;
  }
  if (all.length > 1 && !vscode.window.activeTextEditor) {
    const picked = await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Which workspace folder?' });
    return picked ? { uri: picked.uri.toString(), name: picked.name } : undefined;
  }
  return folders.active();
}
