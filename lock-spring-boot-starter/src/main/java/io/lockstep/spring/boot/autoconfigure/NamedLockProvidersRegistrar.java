package io.lockstep.spring.boot.autoconfigure;

import io.lockstep.LockProvider;
import java.util.Map;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.support.AutowireCandidateQualifier;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Registers one {@link LockProvider} bean per {@code lockstep.providers.<name>}, named {@code
 * <name>LockstepProvider} and qualified {@code <name>}, unless a bean of that name exists. When {@code
 * lockstep.uri} also made the default {@code lockstepProvider}, that one becomes primary.
 */
final class NamedLockProvidersRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware, BeanFactoryAware {

    static final String DEFAULT_BEAN = "lockstepProvider";

    private Environment environment;
    private BeanFactory beanFactory;

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
        Map<String, LockstepProperties.Provider> named = Binder.get(environment)
                .bind("lockstep.providers", Bindable.mapOf(String.class, LockstepProperties.Provider.class))
                .orElse(Map.of());
        for (String name : named.keySet()) {
            String beanName = name + "LockstepProvider";
            if (registry.containsBeanDefinition(beanName)) {
                continue;
            }
            RootBeanDefinition definition = new RootBeanDefinition(LockProvider.class);
            definition.setInstanceSupplier(
                    () -> beanFactory.getBean(LockProviderOpener.class).openNamed(name));
            definition.addQualifier(new AutowireCandidateQualifier(Qualifier.class, name));
            definition.setDestroyMethodName("close");
            registry.registerBeanDefinition(beanName, definition);
        }
        if (!named.isEmpty() && registry.containsBeanDefinition(DEFAULT_BEAN)) {
            registry.getBeanDefinition(DEFAULT_BEAN).setPrimary(true);
        }
    }
}
