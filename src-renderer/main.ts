import { createPinia } from 'pinia'
import { createApp } from 'vue'
import App from './App.vue'
import { installBrowserBridge } from './bridge'
import './styles.css'

installBrowserBridge()
createApp(App).use(createPinia()).mount('#app')
