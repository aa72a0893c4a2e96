// Loaded by the modules page with a dynamic import().
const label = document.createElement('div');
label.style.cssText = 'position:absolute;left:20px;top:204px;font:16px sans-serif;color:#e5e5e5';
document.body.appendChild(label);

export function decorate(ms) {
  label.textContent = 'dynamic import: ' + (ms / 1000).toFixed(3) + ' s';
}
