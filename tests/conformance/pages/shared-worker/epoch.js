// pagereel's epoch, 2026-01-01T00:00:00Z, for module-shared.js's static import.
export const epoch = Date.UTC(2026, 0, 1);
