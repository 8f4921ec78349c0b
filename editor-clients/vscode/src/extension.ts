/** Entry point: creates the objects and wires them together. No logic lives here. */

import * as vscode from 'vscode';
import { ChatController } from './chat/chatController';
import { ChatViewProvider } from './chat/chatView';
import { commandTable, registerCommands } from './commands';
import { ModelCatalog } from './models/modelCatalog';
import { ModelCommands } from './models/modelCommands';
import { reportStartFailure } from './server/startFailure';
import { readChatSettings, readServerSettings, readShowWorkerSessions, RESTART_SETTINGS } from './server/settings';
import { SwitchmanClient } from './server/switchmanClient';
import { DOCUMENT_SCHEME, SwitchmanDocuments } from './sessions/documents';
import { SessionsTree } from './sessions/sessionsTree';
import { ProfileCommands } from './profiles/profileCommands';
import { profileStatusView } from './status/profileText';
import { StatusBar } from './status/statusBar';
import { StatusStore } from './status/statusStore';
import { ApprovalCenter } from './tools/approval';
import { TrustCommands } from './tools/trustCommands';
import { codeAction } from './tools/codeBlocks';
import { PROPOSAL_SCHEME, ProposalDocuments, VscodeApprovalHost } from './tools/approvalHost';
import { ServerRequests } from './protocol/methods';
import type { ApprovalRequest } from './protocol/types';
import {
  activeEditor, createProfileItem, createStatusItem, launchHost, openLocation, settingsReader, vscodeFolders, vscodePickerUi,
} from './vscodeHost';

let client: SwitchmanClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('Switchman');
  const settings = settingsReader();
  client = new SwitchmanClient(output, () => readServerSettings(settings), launchHost(),
    (failure) => reportStartFailure(failure, output));
  const connection = client;
  const proposals = new ProposalDocuments();
  let chatView: ChatViewProvider | undefined;
  const approvals = new ApprovalCenter(new VscodeApprovalHost(proposals, {
    visible: () => chatView?.visible ?? false,
    reveal: async (focus?: boolean) => chatView?.reveal(focus),
  }), client);
  const statuses = new StatusStore(client);
  const catalog = new ModelCatalog(client);
  const chat = new ChatController(client, vscodeFolders, statuses, () => readChatSettings(settings), {
    openSettings: () => void vscode.commands.executeCommand('workbench.action.openSettings', 'switchman.'),
    restartServer: () => void vscode.commands.executeCommand('switchman.restartServer'),
    openLocation: (path, line, column) => void openLocation(path, line, column),
    activeEditor,
    codeAction: (action, text, turnId) => codeAction(connection, action, text, turnId),
    approvals,
  });
  chatView = new ChatViewProvider(context.extensionUri, chat);
  const sessions = new SessionsTree(client, vscodeFolders, statuses, () => readShowWorkerSessions(settings));
  const models = new ModelCommands(client, catalog, vscodePickerUi, statuses);
  const statusBar = new StatusBar(vscodeFolders, statuses, client, catalog, createStatusItem);
  const profiles = new ProfileCommands(client, vscodePickerUi);
  const profileBar = new StatusBar(vscodeFolders, statuses, client, catalog, createProfileItem, profileStatusView);
  client.onRequest(ServerRequests.approve,
    (params, signal) => approvals.ask(params as ApprovalRequest, signal));
  const trust = new TrustCommands(client, vscodeFolders);

  context.subscriptions.push(
    output, client, statuses, catalog, chat, chatView, sessions, statusBar, profileBar, approvals,
    vscode.window.registerWebviewViewProvider(ChatViewProvider.viewId, chatView),
    vscode.window.registerTreeDataProvider('switchman.sessions', sessions),
    vscode.workspace.registerTextDocumentContentProvider(DOCUMENT_SCHEME, new SwitchmanDocuments(client)),
    vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, proposals),
    ...registerCommands(commandTable({ client, chat, chatView, models, profiles, sessions, folders: vscodeFolders, output, trust })),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (RESTART_SETTINGS.some((key) => event.affectsConfiguration(key))) void client?.restart();
      if (event.affectsConfiguration('switchman.chat')) chat.settingsChanged();
      if (event.affectsConfiguration('switchman.showWorkerSessions')) sessions.refresh();
    }),
    client.onDidChangeState((state) => {
      const first = vscodeFolders.active();
      if (state === 'running' && first) void catalog.fetch(first.uri).catch(() => undefined);
    }),
  );
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
