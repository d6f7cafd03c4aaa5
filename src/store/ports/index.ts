/** Every port's contract and row types, for a use case that takes several (../types.ts adds `Store`, every port at once). */
export * from './audit.js';
export * from './banners.js';
export * from './claims.js';
export * from './contacts.js';
export * from './counters.js';
export * from './deliveries.js';
export * from './outbox.js';
export * from './sessions.js';
export * from './answers.js';
