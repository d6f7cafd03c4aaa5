/**
 * A store that runs every call of another through one function (`around`): the engines'
 * fault classification (./faults.ts) and SQLite's wait for another process's lock
 * (./sqlite/connection.ts) are written as such a function. Each method is listed, so what
 * the wrapper passes on is the contract and nothing else; `extras` (an engine's handle: the
 * SQLite database, the pg pool) ride along for tests and tools.
 */
import type { Store } from './types.js';

/** A method of the store, by name. */
export type StoreMethod = Exclude<keyof Store, 'kind'>;

/** Runs one call of method `name` (`call` makes it on the store wrapped); what it gives is the call's answer. */
export type Around = <T>(name: StoreMethod, call: () => Promise<T>) => Promise<T>;

/** `store`, each method delegating through `around`, with `extras` alongside. */
export function storeThrough<X extends object>(store: Store, around: Around, extras: X): Store & X {
  return {
    ...extras,
    kind: store.kind,
    // deliveries
    writeRecord: (...a) => around('writeRecord', () => store.writeRecord(...a)),
    listDeliveries: (...a) => around('listDeliveries', () => store.listDeliveries(...a)),
    findDeliveries: (...a) => around('findDeliveries', () => store.findDeliveries(...a)),
    findListings: (...a) => around('findListings', () => store.findListings(...a)),
    decideDelivery: (...a) => around('decideDelivery', () => store.decideDelivery(...a)),
    recordRelease: (...a) => around('recordRelease', () => store.recordRelease(...a)),
    reviseHeld: (...a) => around('reviseHeld', () => store.reviseHeld(...a)),
    expirePending: (...a) => around('expirePending', () => store.expirePending(...a)),
    getDelivery: (...a) => around('getDelivery', () => store.getDelivery(...a)),
    findDeliveryByProviderMessage: (...a) => around('findDeliveryByProviderMessage', () => store.findDeliveryByProviderMessage(...a)),
    updateDeliveryStatus: (...a) => around('updateDeliveryStatus', () => store.updateDeliveryStatus(...a)),
    amendDelivery: (...a) => around('amendDelivery', () => store.amendDelivery(...a)),
    holdReceipt: (...a) => around('holdReceipt', () => store.holdReceipt(...a)),
    settleHeldReceipts: (target, fold) => around('settleHeldReceipts', () => store.settleHeldReceipts(target, fold)),
    // claims
    claimIdempotency: (...a) => around('claimIdempotency', () => store.claimIdempotency(...a)),
    markIdempotencySending: (...a) => around('markIdempotencySending', () => store.markIdempotencySending(...a)),
    completeIdempotency: (...a) => around('completeIdempotency', () => store.completeIdempotency(...a)),
    releaseIdempotency: (...a) => around('releaseIdempotency', () => store.releaseIdempotency(...a)),
    answerApproval: (...a) => around('answerApproval', () => store.answerApproval(...a)),
    // outbox
    approveDelivery: (...a) => around('approveDelivery', () => store.approveDelivery(...a)),
    takeBackApproved: (...a) => around('takeBackApproved', () => store.takeBackApproved(...a)),
    editWaiting: (...a) => around('editWaiting', () => store.editWaiting(...a)),
    scheduleSend: (...a) => around('scheduleSend', () => store.scheduleSend(...a)),
    claimDue: (...a) => around('claimDue', () => store.claimDue(...a)),
    recordReleases: (...a) => around('recordReleases', () => store.recordReleases(...a)),
    finishRelease: (...a) => around('finishRelease', () => store.finishRelease(...a)),
    holdRelease: (...a) => around('holdRelease', () => store.holdRelease(...a)),
    moveWaiting: (...a) => around('moveWaiting', () => store.moveWaiting(...a)),
    getOutboxEntry: (...a) => around('getOutboxEntry', () => store.getOutboxEntry(...a)),
    escalationSteps: (...a) => around('escalationSteps', () => store.escalationSteps(...a)),
    scheduleEscalation: (...a) => around('scheduleEscalation', () => store.scheduleEscalation(...a)),
    cancelEscalation: (...a) => around('cancelEscalation', () => store.cancelEscalation(...a)),
    listOutbox: (...a) => around('listOutbox', () => store.listOutbox(...a)),
    nextDue: (...a) => around('nextDue', () => store.nextDue(...a)),
    oldestRelease: (...a) => around('oldestRelease', () => store.oldestRelease(...a)),
    findUnrecordedOutbox: (...a) => around('findUnrecordedOutbox', () => store.findUnrecordedOutbox(...a)),
    // audit
    auditHead: (...a) => around('auditHead', () => store.auditHead(...a)),
    auditEntries: (...a) => around('auditEntries', () => store.auditEntries(...a)),
    auditLines: (...a) => around('auditLines', () => store.auditLines(...a)),
    auditFor: (...a) => around('auditFor', () => store.auditFor(...a)),
    pruneAudit: (...a) => around('pruneAudit', () => store.pruneAudit(...a)),
    // banners
    insertBanner: (...a) => around('insertBanner', () => store.insertBanner(...a)),
    purgeBanners: (...a) => around('purgeBanners', () => store.purgeBanners(...a)),
    getBanner: (...a) => around('getBanner', () => store.getBanner(...a)),
    findActiveBannerByDedupe: (...a) => around('findActiveBannerByDedupe', () => store.findActiveBannerByDedupe(...a)),
    dismissBanner: (...a) => around('dismissBanner', () => store.dismissBanner(...a)),
    endBanner: (...a) => around('endBanner', () => store.endBanner(...a)),
    listBanners: (...a) => around('listBanners', () => store.listBanners(...a)),
    bannersVersion: (...a) => around('bannersVersion', () => store.bannersVersion(...a)),
    // contacts and opt-outs
    findOptedOut: (...a) => around('findOptedOut', () => store.findOptedOut(...a)),
    addOptOut: (...a) => around('addOptOut', () => store.addOptOut(...a)),
    knownContacts: (...a) => around('knownContacts', () => store.knownContacts(...a)),
    addContacts: (...a) => around('addContacts', () => store.addContacts(...a)),
    listContacts: (...a) => around('listContacts', () => store.listContacts(...a)),
    forgetContact: (...a) => around('forgetContact', () => store.forgetContact(...a)),
    // counters
    admitRate: (...a) => around('admitRate', () => store.admitRate(...a)),
    chargeCaps: (...a) => around('chargeCaps', () => store.chargeCaps(...a)),
    listCapCounters: (...a) => around('listCapCounters', () => store.listCapCounters(...a)),
    // sessions, then answers
    revokeSession: (...a) => around('revokeSession', () => store.revokeSession(...a)),
    sessionRevoked: (...a) => around('sessionRevoked', () => store.sessionRevoked(...a)),
    answerKey: (...a) => around('answerKey', () => store.answerKey(...a)),
    recordQuestion: (...a) => around('recordQuestion', () => store.recordQuestion(...a)),
    getQuestion: (...a) => around('getQuestion', () => store.getQuestion(...a)),
    questionByToken: (...a) => around('questionByToken', () => store.questionByToken(...a)),
    unansweredQuestionsTo: (...a) => around('unansweredQuestionsTo', () => store.unansweredQuestionsTo(...a)),
    answeredAmong: (...a) => around('answeredAmong', () => store.answeredAmong(...a)),
    openQuestions: (...a) => around('openQuestions', () => store.openQuestions(...a)),
    answerQuestion: (...a) => around('answerQuestion', () => store.answerQuestion(...a)),
    close: () => around('close', () => store.close()),
  };
}
