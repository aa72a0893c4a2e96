// Colours of the modules page.
window.moduleBits = (window.moduleBits || 0) | (1 << 2);

export const colors = ['#fca311', '#e5e5e5', '#ef476f', '#06d6a0', '#118ab2', '#ffd166'];
