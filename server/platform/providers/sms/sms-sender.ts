/**
 * Sends one text message about a case. Adapters throw when the message could not be handed over.
 */
export interface SmsSender {
  send(message: { to: string; body: string; caseId: string }): Promise<void>;
}
