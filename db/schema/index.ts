export * from './api';
export * from './auth';
export * from './billing';
export * from './cases';
export * from './events';
export * from './mail';
export * from './teams';
export * from './webhooks';
