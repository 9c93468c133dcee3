import { createPinia } from 'pinia'
import { createApp } from 'vue'
import App from './App.vue'
import { installBrowserBridge } from './bridge'
import './styles.css'

// The backend is reached through bridge/: window.trainpool in Electron (preload). In browser mode
// (`trainpool serve`, no preload) installBrowserBridge() sets the WebSocket bridge before this mount
// (keep this call: the browser E2E specs depend on it); App shows a clear error when neither exists.
installBrowserBridge()
createApp(App).use(createPinia()).mount('#app')
